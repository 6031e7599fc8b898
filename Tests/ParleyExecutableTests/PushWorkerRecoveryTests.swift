import Foundation
import ParleyCore
import ParleyPostgres
import ParleyPushSimulator
import ParleyRedis
import ParleyTestSupport
import Testing

/// `parley worker --roles push` killed while pushes are in flight: another worker sends the
/// rest, and no device misses its push.
struct PushWorkerRecoveryTests {
    @Test func aKilledPushWorkerLosesNoJob() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        // Slow answers keep jobs in flight when the first worker dies.
        try await PushFixture.with(latency: .milliseconds(100)) { push in
            let directory = TestScratch.path("parley-push")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let keyFile = "\(directory)/AuthKey.p8"
            try push.apnsKey.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)

            var parley = ParleyCommand(database: database, services: services)
            parley = ParleyCommand(
                environment: parley.environment.merging([
                    "PARLEY_APNS_KEY_FILE": keyFile, "PARLEY_APNS_KEY_ID": PushFixture.apnsKeyID,
                    "PARLEY_APNS_TEAM_ID": PushFixture.apnsTeamID, "PARLEY_APNS_TOPIC": PushFixture.apnsTopic,
                    "PARLEY_APNS_URL": push.simulator.baseURL, "PARLEY_PUSH_CA_FILE": push.certificatePath,
                    "PARLEY_PUSH_CONCURRENCY": "4",
                    // Pushes the killed worker had read are sent by the second one after this.
                    "PARLEY_PUSH_VISIBILITY_TIMEOUT": "2",
                ]) { $1 })

            let tag = UUID().uuidString.prefix(8)
            let tokens = Set((0..<120).map { "kill-\(tag)-\($0)" })
            let pool = RedisConnectionPool(configuration: services.redis(), logger: .quiet)
            let queue = RedisJobQueue(name: "push", pool: pool)
            for token in tokens.sorted() {
                try await queue.enqueue(
                    PushJob(
                        deviceID: 1, userID: 1, provider: .apns, token: token,
                        notification: PushNotification(
                            reason: .message, roomID: 1, roomUID: "room", title: "T", body: "B", actorID: 2,
                            messageID: 3,
                            seq: 4, badge: 1)
                    ).json())
            }
            func delivered() -> Set<String> {
                Set(push.simulator.received.filter { $0.answer == .success && $0.problems.isEmpty }.map(\.token))
                    .intersection(tokens)
            }

            // The tokens of pushes a worker has read and not yet acknowledged.
            func held() async throws -> Set<String> {
                let pending = try await pool.send("XPENDING", queue.stream, "parley", "-", "+", "1000").array ?? []
                var held = Set<String>()
                for entry in pending {
                    guard let id = entry.array?.first?.string else { continue }
                    let job = try await pool.send("XRANGE", queue.stream, id, id).array?.first?.array?.last?.array?.last
                    if let data = job?.string?.data(using: .utf8),
                        let token = (try? JSONCoding.decoder.decode(PushJob.self, from: data))?.token
                    {
                        held.insert(token)
                    }
                }
                return held.intersection(tokens)
            }

            let stack = try await LiveStack.start(parley, serve: false, workerRoles: ["push"])
            try await stack.stopping {
                let first = try #require(stack.worker)
                // The worker is stopped before it is looked at: a running one may acknowledge its
                // last held push between the look and the kill (seen under stress-ng), and then the
                // kill proves nothing. Stopped, what it holds cannot change; the pause lets Redis
                // read an acknowledgement already written before the stop.
                for _ in 0..<500 {
                    if delivered().count >= 10 {
                        first.suspend()
                        try await Task.sleep(for: .milliseconds(50))
                        if try await !held().isEmpty { break }
                        first.resume()
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
                await first.kill()
                let atKill = delivered().count
                let heldAtKill = try await held()
                #expect(!heldAtKill.isEmpty, "the killed worker held no push; the test proved nothing")
                #expect(atKill >= 10, "the first worker sent too little: \(first.log)")
                #expect(
                    atKill < tokens.count, "the first worker finished before it was killed; the test proved nothing")

                let restart = ContinuousClock.now
                func sentAgain() -> Set<String> {
                    Set(push.simulator.received.filter { $0.receivedAt > restart }.map(\.token))
                }
                let second = try await stack.startWorker("second-worker", roles: ["push"])
                for _ in 0..<600 where delivered().count < tokens.count || !heldAtKill.isSubset(of: sentAgain()) {
                    try await Task.sleep(for: .milliseconds(50))
                }
                let status = await second.stop()
                #expect(status == 0)
                #expect(delivered() == tokens)
                // What the killed worker held is sent again: it may never have left that worker.
                #expect(heldAtKill.isSubset(of: sentAgain()))
            }
        }
    }
}
