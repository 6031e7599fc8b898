import PostgresNIO

// A transaction's own statements, prepared once per connection like the pipeline's: sent
// through `query`, each was parsed and described again on every transaction, by PostgreSQL
// and by PostgresNIO, for a statement that does nothing else.

/// `BEGIN`.
struct BeginStatement: PostgresPreparedStatement {
    static let sql = "BEGIN"
    typealias Row = Void
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

/// `COMMIT`.
struct CommitStatement: PostgresPreparedStatement {
    static let sql = "COMMIT"
    typealias Row = Void
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

/// Nothing: its answer comes after everything sent before it on the connection, the commit
/// of a statement run alone included (``PostgresPool/committed(_:logger:)``).
struct CommittedStatement: PostgresPreparedStatement {
    static let sql = "SELECT 1"
    typealias Row = Void
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}
