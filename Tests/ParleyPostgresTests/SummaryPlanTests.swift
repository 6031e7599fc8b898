import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyPostgres

/// A summary's read of its rooms' newest messages finds each by `(room, seq)` in the index:
/// its plan (generic, as a prepared statement's becomes) reads no room's history.
struct SummaryPlanTests {
    @Test func theNewestMessagesAreFoundByRoomAndSeq() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: true)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let plan = try await pool.client.withConnection { connection in
                _ = try await connection.query("SET plan_cache_mode = force_generic_plan", logger: .quiet).collect()
                _ = try await connection.query(
                    PostgresQuery(unsafeSQL: "PREPARE newest(bigint[]) AS " + NewestMessagesStatement.sql),
                    logger: .quiet
                ).collect()
                return try await connection.query("EXPLAIN EXECUTE newest('{1,2}')", logger: .quiet)
                    .collect().map { try $0.decode(String.self) }.joined(separator: "\n")
            }
            #expect(plan.contains("Index Cond: ((chat_room_id = c.id) AND (seq = c.last_seq))"), "\(plan)")
            #expect(!plan.contains("Join Filter: (m.seq = c.last_seq)"), "\(plan)")
        }
    }
}
