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
    /// The SQLSTATE of a server error (see ``SQLState``).
    public var sqlState: String? { serverInfo?[.sqlState] }

    /// A row with the same unique key exists (a concurrent insert of it committed first).
    var isUniqueViolation: Bool { sqlState == SQLState.uniqueViolation }
    /// A referenced row does not exist (a user or group that is not there).
    var isForeignKeyViolation: Bool { sqlState == SQLState.foreignKeyViolation }
}

/// The SQLSTATEs Parley tells apart (PostgreSQL's *Appendix A*), named in one place.
enum SQLState {
    static let uniqueViolation = "23505"
    static let foreignKeyViolation = "23503"
    static let tooManyConnections = "53300"
    /// Class 08: the connection failed.
    static let connectionExceptionClass = "08"
    /// 57P01–57P05: the server is shutting down, crashed, or not yet accepting connections.
    static let operatorInterventionShutdownPrefix = "57P"
}
