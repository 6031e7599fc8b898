import Foundation
import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// A statement handed a pooled connection that PostgreSQL closed a moment before answers or
/// fails at once. PostgresNIO 1.33.2 drops a statement written into a closed connection, and
/// its caller waited for the whole answer bound: about 3 rounds in 100 here did, before the
/// pool's statements watched their connection (``BoundedPostgresClient``).
struct ClosedConnectionTests {
    @Test func aStatementRightAfterItsConnectionIsTerminatedAnswersOrFailsAtOnce() async throws {
        var one = try await TestServices.shared().makeDatabase(migrated: false)
        // One connection: the one terminated is the one the next statement leases.
        one.maximumConnections = 1
        let configuration = one
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { admin in
            try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
                let bounded = pool.client.answering(within: .seconds(3))
                var slow = 0
                for round in 0..<200 {
                    var pid: Int32?
                    for _ in 0..<20 where pid == nil {
                        pid = try? await bounded.query("SELECT pg_backend_pid()", logger: .quiet).single(Int32.self)
                    }
                    let backend = try #require(pid)
                    _ = try await admin.client.query("SELECT pg_terminate_backend(\(backend))", logger: .quiet)
                    // The statement meets the close at different moments of its course.
                    if round % 4 != 0 { try await Task.sleep(for: .microseconds(250 * (round % 8))) }
                    let started = ContinuousClock.now
                    _ = try? await bounded.query("SELECT 1", logger: .quiet)
                    if ContinuousClock.now - started > .seconds(2) { slow += 1 }
                }
                #expect(slow == 0)
            }
        }
    }
}
