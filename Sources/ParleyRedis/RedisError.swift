import ParleyCore

/// A failure talking to Redis.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached or the connection broke (I/O error, timeout).
    case connection(String)
    /// The server answered with an error reply (`-ERR ...`); the connection stays usable.
    case server(String)
    /// The pool was shut down.
    case closed

    public var description: String {
        switch self {
        case .connection(let reason): "Redis connection failed: \(reason)"
        case .server(let message): "Redis error: \(message)"
        case .closed: "Redis pool is closed"
        }
    }
}

extension RedisError: DependencyError {
    /// A broken or unreachable connection, or a closed pool; not an error reply.
    public var isUnavailability: Bool {
        switch self {
        case .connection, .closed: true
        case .server: false
        }
    }
}
