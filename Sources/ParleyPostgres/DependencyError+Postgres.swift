import ParleyCore
import PostgresNIO
import _ConnectionPoolModule

// Which PostgreSQL failures mean the database is down or did not answer (503), rather than
// that it refused a statement (500).

extension ConnectionLostError: DependencyError {
    public var isUnavailability: Bool { true }
}

/// A lease the pool gave up on: PostgresNIO's circuit breaker trips after a minute of failed
/// connects (transactions wait for their connection that long), or the pool was shut down.
extension ConnectionPoolError: DependencyError {
    public var isUnavailability: Bool { self != .requestCancelled }
}

extension PSQLError: DependencyError {
    /// A connection that could not be made or broke, a closed pool, or a server that is
    /// shutting down, starting up or out of connections — not a statement PostgreSQL refused.
    public var isUnavailability: Bool {
        switch code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            guard let state = sqlState else { return false }
            // Class 08 (the connection failed), 57P01–57P05 (the server is shutting down,
            // crashed, or not yet accepting connections), or out of connections.
            return state.raw.hasPrefix(PostgresError.Code.connectionException.raw.prefix(2))
                || state.raw.hasPrefix(PostgresError.Code.adminShutdown.raw.prefix(3)) || state == .tooManyConnections
        default:
            return false
        }
    }
}
