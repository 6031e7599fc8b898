import Foundation
import ParleyCore
import ParleyPostgres
import Testing

/// Recording a delivery's attempt writes its webhook's row only when the webhook's state
/// changes: a success while it is healthy leaves the row alone (its lock is what a webhook's
/// lanes otherwise take turns on), a failure marks it failing once, a success clears that.
struct WebhookFinishTests {
    @Test func anAttemptWritesItsWebhookOnlyWhenItsStateChanges() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { _ in try await Self.attempts(on: harness.database, to: try await harness.webhook()) }
    }

    private static func attempts(on database: PostgresPool, to webhook: Webhook) async throws {
        let store = PostgresWebhookRepository(database: database, logger: .quiet)
        func delivery(_ id: String) async throws -> DueWebhookDelivery {
            try await database.client.query(
                """
                INSERT INTO cloud.webhook_delivery (id, webhook_id, lane, type, body, status)
                VALUES (\(id), \(webhook.id), 0, 'message.created', '{}', 'pending')
                """, logger: .quiet)
            return DueWebhookDelivery(
                id: id, webhookID: webhook.id, url: webhook.url, key: Array(repeating: 1, count: 32), body: "{}",
                firstAttemptAt: nil, attempts: 0, failingSince: nil)
        }
        /// The webhook row's version (`xmin`, a new one for every write) and whether it is failing.
        func state() async throws -> (version: String, failing: Bool) {
            let row = try await database.client.query(
                "SELECT xmin::text, failing_since IS NOT NULL FROM cloud.webhook WHERE id = \(webhook.id)",
                logger: .quiet
            ).first((String, Bool).self)
            let (version, failing) = try #require(row)
            return (version, failing)
        }
        func attempt(_ status: Int) -> WebhookDelivery.Attempt {
            .init(at: Date(), statusCode: status, error: nil, durationMs: 1)
        }
        let start = try await state()

        _ = try await store.finish(try await delivery("a"), attempt: attempt(204), next: .succeeded)
        let afterSuccess = try await state()
        #expect(afterSuccess.version == start.version && !afterSuccess.failing)

        _ = try await store.finish(
            try await delivery("b"), attempt: attempt(500), next: .retry(at: Date().addingTimeInterval(5)))
        let failing = try await state()
        #expect(failing.version != start.version && failing.failing)
        _ = try await store.finish(
            try await delivery("c"), attempt: attempt(500), next: .retry(at: Date().addingTimeInterval(5)))
        #expect(try await state().version == failing.version, "already failing: nothing to write")

        _ = try await store.finish(try await delivery("d"), attempt: attempt(204), next: .succeeded)
        let healed = try await state()
        #expect(healed.version != failing.version && !healed.failing)

        let disabled = try await store.finish(
            try await delivery("e"), attempt: attempt(500), next: .failed(disable: true))
        #expect(disabled?.enabled == false)
        let statuses = try await database.client.query(
            "SELECT id || '=' || status FROM cloud.webhook_delivery ORDER BY id", logger: .quiet
        ).all(String.self)
        #expect(statuses == ["a=succeeded", "b=pending", "c=pending", "d=succeeded", "e=failed"])
    }
}
