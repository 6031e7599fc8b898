import PostgresNIO

extension PSQLError {
    /// A one-line explanation for an operator's terminal (never for a client's response):
    /// the server's message and SQLSTATE, or the connection-level failure.
    public var operatorDescription: String {
        if let message = serverInfo?[.message] {
            return "PostgreSQL: \(message) (SQLSTATE \(serverInfo?[.sqlState] ?? "?"))"
        }
        return "PostgreSQL: \(code)"
    }
}

extension PSQLError {
    /// The SQLSTATE of a server error (`23505` unique violation, `23503` foreign key ...).
    public var sqlState: String? { serverInfo?[.sqlState] }
}
