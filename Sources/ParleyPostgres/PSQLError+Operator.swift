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
    /// The SQLSTATE of a server error, as PostgresNIO names them.
    public var sqlState: PostgresError.Code? { serverInfo?[.sqlState].map { PostgresError.Code(raw: $0) } }

    /// A row with the same unique key exists (a concurrent insert of it committed first).
    var isUniqueViolation: Bool { sqlState == .uniqueViolation }
    /// A referenced row does not exist (a user or group that is not there).
    var isForeignKeyViolation: Bool { sqlState == .foreignKeyViolation }
}
