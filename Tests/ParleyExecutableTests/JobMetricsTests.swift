import Foundation
import ParleyTestSupport
import Testing

/// `/metrics` of a real worker: each queue's depth, and its jobs by outcome.
struct JobMetricsTests {
    @Test func aWorkerReportsItsQueuesDepthAndJobs() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        // A Redis database of its own: the queues' names are global, and other tests' workers
        // on the shared Redis (a maintenance role's) must not take this test's jobs, nor it theirs.
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_REDIS_DATABASE": "7"
            ]) { $1 })
        let stack = try await LiveStack.start(parley, workerRoles: ["outbox", "maintenance"])
        do {
            // An account deletion is a job on the `maintenance` queue.
            let leaving = try await stack.signUp("leaving")
            let deleted = try await stack.request(
                "DELETE", "/v1/me", body: #"{"currentPassword":"correct horse battery"}"#, token: leaving.token)
            #expect(deleted.status == 202)
            func lines(_ name: String) async throws -> [Substring] {
                let text = try await Subprocess.run(
                    "/usr/bin/curl", ["-s", "--max-time", "10", stack.workerBase + "/metrics"]
                ).standardOutput
                return text.split(separator: "\n").filter { $0.hasPrefix(name + "{") }
            }
            func succeeded() async throws -> Double {
                try await lines("parley_jobs_total").filter {
                    $0.contains(#"queue="maintenance""#) && $0.contains(#"outcome="succeeded""#)
                }.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.first ?? 0
            }
            var done = 0.0
            for _ in 0..<100 where done < 1 {
                try await Task.sleep(for: .milliseconds(100))
                done = try await succeeded()
            }
            #expect(done >= 1, "no maintenance job counted as succeeded")
            // Read at the worker's housekeeping, which may come a while after the job: nothing
            // waits once it has (polled for up to 10 s).
            func depth() async throws -> [Substring] {
                try await lines("parley_queue_depth").filter { $0.contains(#"queue="maintenance""#) }
            }
            func isEmpty(_ depth: [Substring]) -> Bool {
                depth.count == 1 && depth.first?.split(separator: " ").last.flatMap { Double($0) } == 0
            }
            var seen = try await depth()
            for _ in 0..<100 where !isEmpty(seen) {
                try await Task.sleep(for: .milliseconds(100))
                seen = try await depth()
            }
            #expect(isEmpty(seen), "\(seen)")
            #expect(
                try await lines("parley_jobs_total").contains {
                    $0.contains(#"queue="maintenance""#) && $0.contains(#"outcome="dead""#)
                })
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }
}
