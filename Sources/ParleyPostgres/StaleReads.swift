import Logging
import PostgresNIO

/// A read that may be a little stale (``PostgresPool/reads``): on a replica when one was
/// picked, and on the primary when that replica fails it (down, restarting, slow to answer,
/// or cancelling the statement for a conflict with recovery). A read is safe to run again,
/// so a replica's death costs its readers a retry, never an error; the replica is skipped
/// until the monitor sees it keep up again.
///
/// Only a failure before the first row is retried: a replica lost halfway through a result
/// fails that read (results here are pages of at most a few hundred rows).
public struct StaleReads: Sendable {
    let primary: BoundedPostgresClient
    let replica: (client: BoundedPostgresClient, failed: @Sendable (any Error) -> Void)?

    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try await firstAnswering { try await $0.query(query, logger: logger, file: file, line: line) }
    }

    public func execute<Statement: PostgresPreparedStatement, Row>(
        _ statement: Statement, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Row> where Row == Statement.Row {
        try await firstAnswering { try await $0.execute(statement, logger: logger, file: file, line: line) }
    }

    private func firstAnswering<Result>(_ read: (BoundedPostgresClient) async throws -> Result) async throws
        -> Result
    {
        guard let replica else { return try await read(primary) }
        do {
            return try await read(replica.client)
        } catch {
            try Task.checkCancellation()
            replica.failed(error)
            return try await read(primary)
        }
    }
}
