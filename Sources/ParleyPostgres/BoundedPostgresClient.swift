import Logging
import ParleyCore
import ParleyRuntime
import PostgresNIO

/// PostgresNIO's pooled client, with every statement's start bounded in time.
///
/// PostgresNIO 1.33.2 writes a statement into its connection without a write promise: if the
/// pool leased a connection that PostgreSQL closed a moment before (a restart), the statement
/// is dropped and its caller waits forever, holding a request or a job and then the process's
/// shutdown (a test run in CI hung so). Here a statement that has not started answering
/// within `answerTimeout` fails with ``ConnectionLostError``; a request then fails instead of
/// hanging. See the ParleyCore article *Dependency failures and recovery*.
public struct BoundedPostgresClient: Sendable {
    /// The pool itself, for what runs on one held connection (`withConnection`).
    public let pool: PostgresClient
    let answerTimeout: Duration

    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try await bounded { try await pool.query(query, logger: logger, file: file, line: line) }
    }

    public func execute<Statement: PostgresPreparedStatement, Row>(
        _ statement: Statement, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Row> where Row == Statement.Row {
        // The mapped sequence is not Sendable only because its closure is not marked so.
        try await bounded { Handed(try await pool.execute(statement, logger: logger, file: file, line: line)) }.value
    }

    /// The same pool with another bound, for a statement known to take longer (or shorter).
    public func answering(within limit: Duration) -> BoundedPostgresClient {
        BoundedPostgresClient(pool: pool, answerTimeout: limit)
    }

    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await pool.withConnection(body)
    }

    private func bounded<Result: Sendable>(_ statement: @escaping @Sendable () async throws -> Result)
        async throws -> Result
    {
        do {
            return try await withTimeout(answerTimeout, operation: statement)
        } catch is TimeoutError {
            throw ConnectionLostError(description: "PostgreSQL did not start answering within \(answerTimeout)")
        }
    }
}

/// A value handed from the task that made it to the one that awaits it, and used only there.
private struct Handed<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
