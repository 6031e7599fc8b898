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
