import Logging
import PostgresNIO

// A transaction's own statements, prepared once per connection like the pipeline's: sent
// through `query`, each was parsed and described again on every transaction, by PostgreSQL
// and by PostgresNIO, for a statement that does nothing else.

/// A statement without parameters whose rows, if any, nobody reads.
protocol BareStatement: PostgresPreparedStatement where Row == Void {
    init()
}

extension BareStatement {
    func makeBindings() throws -> PostgresBindings { PostgresBindings() }
    func decodeRow(_ row: PostgresRow) throws {}
}

extension PostgresConnection {
    /// Runs `Statement` and waits for its answer.
    func run<Statement: BareStatement>(_ statement: Statement.Type, logger: Logger) async throws {
        _ = try await execute(Statement(), logger: logger).allRows()
    }
}

struct BeginStatement: BareStatement {
    static let name = String(reflecting: Self.self)
    static let sql = "BEGIN"
}

struct CommitStatement: BareStatement {
    static let name = String(reflecting: Self.self)
    static let sql = "COMMIT"
}

/// Nothing: its answer comes after everything sent before it on the connection, the commit
/// of a statement run alone included (``PostgresPool/committed(_:logger:)``).
struct CommittedStatement: BareStatement {
    static let name = String(reflecting: Self.self)
    static let sql = "SELECT 1"
}
