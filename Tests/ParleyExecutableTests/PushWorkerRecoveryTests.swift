import Foundation
import ParleyCore
import ParleyPostgres
import ParleyPushSimulator
import ParleyRedis
import ParleyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `parley worker --roles push` killed while pushes are in flight: another worker sends the
/// rest, and no device misses its push.
struct PushWorkerRecoveryTests {
    @Test func aKilledPushWorkerLosesNoJob() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        // Slow answers keep jobs in flight when the first worker dies.
        let push = try await PushFixture.start(latency: .milliseconds(100))
        let directory = NSTemporaryDirectory() + "parley-push-\(UUID().uuidString)"
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
                "PARLEY_PUSH_CONCURRENCY": "4", "PARLEY_JOBS_VISIBILITY_TIMEOUT": "1",
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
                        reason: .message, roomID: 1, roomUID: "room", title: "T", body: "B", actorID: 2, messageID: 3,
                        seq: 4, badge: 1)
                ).json())
        }
        func delivered() -> Set<String> {
            Set(push.simulator.received.filter { $0.answer == .success && $0.problems.isEmpty }.map(\.token))
                .intersection(tokens)
        }

        let log = "\(directory)/worker.log"
        let first = try parley.start("worker", "--roles", "push", log: log)
        for _ in 0..<500 where delivered().count < 10 { try await Task.sleep(for: .milliseconds(20)) }
        kill(first, SIGKILL)
        _ = Subprocess.wait(for: first)
        let atKill = delivered().count
        #expect(
            atKill >= 10,
            "the first worker sent too little: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(atKill < tokens.count, "the first worker finished before it was killed; the test proved nothing")

        let second = try parley.start("worker", "--roles", "push", log: log)
        for _ in 0..<600 where delivered().count < tokens.count { try await Task.sleep(for: .milliseconds(50)) }
        kill(second, SIGTERM)
        let status = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Subprocess.wait(for: second)) }
        }
        #expect(status == 0)
        #expect(delivered() == tokens)
        await push.stop()
    }
}
