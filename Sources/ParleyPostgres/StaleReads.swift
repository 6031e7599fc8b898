import Logging
import Metrics
import ParleyCore
import PostgresNIO

/// A read that may be a little stale (``PostgresPool/reads``): on a replica when one was
/// picked, and on the primary when that replica fails it for its own reasons (down,
/// restarting, out of connections, slow to start answering, or cancelling the statement for a
/// conflict with recovery). A read is safe to run again, so a replica's death costs its
/// readers a retry, never an error; the replica is skipped until the monitor sees it keep up
/// again. A statement's own error (a syntax error, a decoding failure) is thrown as it is.
///
/// The rows are read whole before they are returned, so a failure halfway through a result
/// is retried too (what reads here are pages of at most a few hundred rows).
public struct StaleReads: Sendable {
    let primary: BoundedPostgresClient
    let replica: (client: BoundedPostgresClient, failed: @Sendable (any Error) -> Void)?

    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> [PostgresRow] {
        try await firstAnswering { try await $0.query(query, logger: logger, file: file, line: line).collect() }
    }

    public func execute<Statement: PostgresPreparedStatement, Row: Sendable>(
        _ statement: Statement, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> [Row] where Row == Statement.Row {
        try await firstAnswering { try await $0.execute(statement, logger: logger, file: file, line: line).allRows() }
    }

    private func firstAnswering<Result>(_ read: (BoundedPostgresClient) async throws -> Result) async throws
        -> Result
    {
        guard let replica else { return try await read(primary) }
        do {
            let result = try await read(replica.client)
            Self.answered.increment()
            return result
        } catch {
            try Task.checkCancellation()
            guard Self.isReplicasOwn(error) else { throw error }
            replica.failed(error)
            Self.fellBack.increment()
            return try await read(primary)
        }
    }

    /// Whether the replica, not the statement, failed the read: what counts as PostgreSQL's
    /// unavailability anywhere (``ParleyCore/DependencyError``: a connection lost, refused or
    /// not answering in time, a server shutting down, starting or out of connections), or a
    /// statement cancelled for a conflict with recovery, which only a replica does.
    static func isReplicasOwn(_ error: any Error) -> Bool {
        if (error as? any DependencyError)?.isUnavailability == true { return true }
        return (error as? PSQLError)?.sqlState == .serializationFailure
    }

    static let answered = Counter(
        label: "parley_postgres_replica_reads_total", dimensions: [("answered_by", "replica")])
    static let fellBack = Counter(
        label: "parley_postgres_replica_reads_total", dimensions: [("answered_by", "primary")])
}

extension Array where Element == PostgresRow {
    /// The first row decoded, or nil when there is none.
    public func first<Row: PostgresDecodable>(_ type: Row.Type) throws -> Row? {
        try first.map { try $0.decode(Row.self) }
    }

    public func all<Row: PostgresDecodable>(_ type: Row.Type) throws -> [Row] {
        try map { try $0.decode(Row.self) }
    }
}
