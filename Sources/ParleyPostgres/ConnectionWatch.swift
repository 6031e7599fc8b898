import ParleyRuntime
import PostgresNIO

/// The watch on a running statement's connection, shared by held connections
/// (``PostgresNIO/PostgresConnection/whileOpen(within:_:)``) and pooled statements
/// (``BoundedPostgresClient``): checked every 100 ms, the statement is abandoned once its
/// connection closes or, with a limit, once the limit passes.
enum ConnectionWatch {
    /// Starts watching, for ``ParleyRuntime/withAbandonment(when:operation:)``; returns what stops it.
    /// - Parameters:
    ///   - connection: the statement's connection; nil while it still waits for one.
    ///   - closingOnTimeout: when given, a statement past its limit has its connection closed:
    ///     this runs first (to mark the connection as not to be reused), then the abandonment,
    ///     whose error is the one thrown, then the close.
    static func start(
        connection: @escaping @Sendable () -> PostgresConnection?, limit: Duration?,
        abandon: @escaping @Sendable (any Error) -> Void, closingOnTimeout: (@Sendable () -> Void)? = nil
    ) -> @Sendable () -> Void {
        // Polled rather than a callback on `closeFuture`: a held connection runs thousands of
        // statements, and each callback would stay until it closes.
        let deadline = limit.map { ContinuousClock.now + $0 }
        let watch = Deadlines.shared.every(.milliseconds(100)) {
            let current = connection()
            if let current, current.isClosed {
                abandon(ConnectionLostError(description: "the PostgreSQL connection closed"))
                return false
            }
            guard let deadline, let limit, ContinuousClock.now >= deadline else { return true }
            closingOnTimeout?()
            abandon(ConnectionLostError(description: "PostgreSQL did not answer within \(limit)"))
            if closingOnTimeout != nil, let current { Task { await current.closeForGood() } }
            return false
        }
        return { watch.stop() }
    }
}
