import Logging
import PostgresNIO

extension PostgresPool {
    /// Runs `body` in a transaction, reporting the error that happened inside it.
    ///
    /// The transaction fails as soon as its connection closes: PostgresNIO would otherwise
    /// send the `ROLLBACK` after a failed statement into a closed connection and wait for its
    /// answer forever, holding the pool's lease (see ``PostgresNIO/PostgresConnection/whileOpen(within:_:)``).
    public func transaction<Result: Sendable>(
        logger: Logger, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withShortLease { connection in
            try await connection.whileOpen {
                try await connection.run(BeginStatement.self, logger: logger)
                let result: Result
                do {
                    result = try await body(connection)
                } catch {
                    if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                    throw error
                }
                try await connection.run(CommitStatement.self, logger: logger)
                return result
            }
        }
    }

    /// Runs one statement as a transaction of its own and answers once its commit is
    /// durable, in two round trips where `BEGIN`, the statement and `COMMIT` take three.
    ///
    /// Outside a transaction block PostgreSQL commits a statement at the protocol's `Sync`,
    /// after the rows and `CommandComplete` that end PostgresNIO's answer: a crash in between
    /// loses what the caller already took as stored. The connection answers its next request
    /// only after that commit (`ReadyForQuery` follows it), so a trivial one confirms it; a
    /// commit that fails ends the connection (PostgresNIO takes the late error as a protocol
    /// violation), and the confirmation with it.
    public func committed<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger)
        async throws -> [Statement.Row] where Statement.Row: Sendable
    {
        try await client.withShortLease { connection in
            do {
                return try await connection.whileOpen {
                    let rows = try await connection.execute(statement, logger: logger).allRows()
                    try await connection.run(CommittedStatement.self, logger: logger)
                    return rows
                }
            } catch let refused as PSQLError where refused.code == .server {
                // PostgreSQL's own error (the statement refused): the connection goes on.
                throw refused
            } catch {
                // A failed commit ends the connection: it goes back to the pool closed, not closing.
                await connection.closeForGood()
                throw error
            }
        }
    }
}

extension AsyncSequence where Element == PostgresRow {
    /// The first row decoded, or nil when there is none.
    public func first<Row: PostgresDecodable & Sendable>(_ type: Row.Type) async throws -> Row? {
        for try await row in decode(Row.self) { return row }
        return nil
    }

    public func first<each Column: PostgresDecodable & Sendable>(_ types: (repeat each Column).Type) async throws
        -> (repeat each Column)?
    {
        for try await row in decode((repeat each Column).self) { return row }
        return nil
    }

    /// Exactly one row, decoded.
    public func single<Row: PostgresDecodable & Sendable>(_ type: Row.Type) async throws -> Row {
        guard let row = try await first(Row.self) else { throw MissingRowError() }
        return row
    }

    public func single<each Column: PostgresDecodable & Sendable>(_ types: (repeat each Column).Type) async throws
        -> (repeat each Column)
    {
        guard let row = try await first((repeat each Column).self) else { throw MissingRowError() }
        return row
    }

    public func all<Row: PostgresDecodable & Sendable>(_ type: Row.Type) async throws -> [Row] {
        var rows: [Row] = []
        for try await row in decode(Row.self) { rows.append(row) }
        return rows
    }

    public func all<each Column: PostgresDecodable & Sendable>(_ types: (repeat each Column).Type) async throws
        -> [(repeat each Column)]
    {
        var rows: [(repeat each Column)] = []
        for try await row in decode((repeat each Column).self) { rows.append(row) }
        return rows
    }
}

extension AsyncThrowingMapSequence where Base == PostgresRowSequence {
    /// The first row of a prepared statement, or nil when there is none.
    func firstRow() async throws -> Element? {
        for try await row in self { return row }
        return nil
    }

    /// Every row of a prepared statement.
    func allRows() async throws -> [Element] {
        try await reduce(into: []) { $0.append($1) }
    }
}

/// A statement that always returns a row (`INSERT ... RETURNING`) returned none.
struct MissingRowError: Error {}
