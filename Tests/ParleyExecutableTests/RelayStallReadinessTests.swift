import Foundation
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyAPI

/// A relay held up on purpose (another session holds its lock, as a stuck relay elsewhere
/// would): the worker's readiness goes 503 naming `outbox-relay`, with the backlog on
/// `/metrics`, and back to 200 once the relay drains it.
struct RelayStallReadinessTests {
    @Test func aHeldUpRelayMakesTheWorkerUnreadyUntilItDrains() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let parley = ParleyCommand(
            environment: ParleyCommand(database: database, services: services).environment.merging([
                "PARLEY_OUTBOX_STALL_SECONDS": "2"
            ]) { $1 })
        let pool = PostgresPool(configuration: database, logger: .quiet)
        try await pool.withRunningClient { pool in
            try await pool.client.withConnection { holder in
                _ = try await holder.query("SELECT pg_advisory_lock(\(OutboxRelay.lockKey))", logger: .quiet)
                let stack = try await LiveStack.start(parley, workerRoles: ["outbox"])
                do {
                    try await exercise(stack, releasing: holder)
                } catch {
                    await stack.stop()
                    throw error
                }
                await stack.stop()
            }
        }
    }

    private func exercise(_ stack: LiveStack, releasing holder: PostgresConnection) async throws {
        func readiness() async throws -> LiveStack.Response {
            try await stack.request("GET", "/health/ready", on: stack.workerBase)
        }
        #expect(try await readiness().status == 200)
        let alice = try await stack.signUp("alice")
        let bob = try await stack.signUp("bob")
        let room = try await stack.request("PUT", "/v1/rooms/direct/\(bob.id)", token: alice.token).decoded(
            RoomResponse.self)
        let roomID = room.id
        let sent = try await stack.request(
            "POST", "/v1/rooms/\(roomID)/messages", body: #"{"content":"held up","uid":"held-1"}"#, token: alice.token)
        #expect(sent.status == 201)

        var stalled: LiveStack.Response?
        for _ in 0..<100 where stalled == nil {
            try await Task.sleep(for: .milliseconds(100))
            let answer = try await readiness()
            if answer.status == 503 { stalled = answer }
        }
        let answer = try #require(stalled, "the worker stayed ready while its relay published nothing")
        let problem = try answer.decoded(ProblemDetails.self)
        let checks = problem.checks ?? [:]
        #expect(checks["outbox-relay"] == .down, "\(answer.text)")
        #expect(checks["postgres"] == .up && checks["redis"] == .up && checks["mqtt"] == .up)
        #expect(problem.detail.contains("outbox-relay"))
        let metrics = try await metricsText(stack)
        #expect(metrics.contains("parley_outbox_backlog"), "\(metrics)")
        #expect(metrics.contains("parley_reports_open 0"), "\(metrics)")
        #expect(metrics.contains("parley_reports_oldest_open_age_seconds"), "\(metrics)")

        // The relay takes its lock within a second, drains, and the worker is ready again.
        _ = try await holder.query("SELECT pg_advisory_unlock(\(OutboxRelay.lockKey))", logger: .quiet)
        var ready = false
        for _ in 0..<100 where !ready {
            try await Task.sleep(for: .milliseconds(100))
            ready = try await readiness().status == 200
        }
        #expect(ready, "the worker stayed unready after its relay could publish again")
    }

    private func metricsText(_ stack: LiveStack) async throws -> String {
        let result = try await Subprocess.run(
            "/usr/bin/curl", ["-s", "--max-time", "10", stack.workerBase + "/metrics"])
        return result.standardOutput
    }
}
