import Foundation
import ParleyCore
import ParleyPostgres
import Testing

@testable import parley

/// The maintenance sweep purges finished webhook deliveries and audit entries past their days,
/// and nothing else.
struct LogRetentionTests {
    @Test func finishedDeliveriesAndAuditEntriesGoAfterTheirDays() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { _ in try await check(harness) }
    }

    private func check(_ harness: APIHarness) async throws {
        let database = harness.database
        let webhook = try await harness.webhook()
        // (id, status, age in days)
        let deliveries: [(String, String, Int)] = [
            ("old-succeeded", "succeeded", 31), ("old-failed", "failed", 40), ("old-pending", "pending", 45),
            ("recent-succeeded", "succeeded", 29),
        ]
        for (id, status, days) in deliveries {
            try await database.client.query(
                """
                INSERT INTO cloud.webhook_delivery (id, webhook_id, lane, type, body, status, created_at)
                VALUES (\(id), \(webhook.id), 0, 'message.created', '{}', \(status),
                        now() - make_interval(days => \(Int32(days))))
                """, logger: .quiet)
            try await database.client.query(
                """
                INSERT INTO cloud.webhook_attempt (delivery_id, at, status_code, duration_ms)
                VALUES (\(id), now(), 200, 1)
                """, logger: .quiet)
        }
        for days in [366, 364] {
            try await database.client.query(
                """
                INSERT INTO cloud.audit_entry (at, actor_type, actor_id, action, target)
                VALUES (now() - make_interval(days => \(Int32(days))), 'user', 1, 'POST /v1/admin/bots', '/v1/admin/bots')
                """, logger: .quiet)
        }
        _ = try await harness.sweeper().sweep()
        let kept = try await database.client.query(
            "SELECT id FROM cloud.webhook_delivery ORDER BY id", logger: .quiet
        ).all(String.self)
        #expect(kept == ["old-pending", "recent-succeeded"])
        let attempts = try await database.client.query(
            "SELECT count(*)::bigint FROM cloud.webhook_attempt", logger: .quiet
        ).single(Int64.self)
        #expect(attempts == 2)
        let audit = try await database.client.query(
            "SELECT (now() - at) < interval '365 days' FROM cloud.audit_entry", logger: .quiet
        ).all(Bool.self)
        #expect(audit == [true])
    }
}
