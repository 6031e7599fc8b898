import ParleyCore
import ParleyRuntime
import PostgresNIO

/// A statement was given up on because its connection closed (a server restart, a cut
/// connection) or did not answer in time.
public struct ConnectionLostError: Error, CustomStringConvertible {
    public let description: String
}

extension PostgresConnection {
    /// Runs `operation` on this connection, failing as soon as the connection closes and, with
    /// a `limit`, when it takes longer than that.
    ///
    /// PostgresNIO 1.33.2 writes each statement into the channel without a write promise: once
    /// the connection has closed and its handlers are gone, the statement is dropped and its
    /// result never arrives. A held connection (the relay's lock, `LISTEN`) and a `ROLLBACK`
    /// after a failed statement hit exactly that after a PostgreSQL restart and waited forever.
    /// See the ParleyCore article *Dependency failures and recovery*.
    public func whileOpen<Result: Sendable>(
        within limit: Duration? = nil, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        guard !isClosed else { throw ConnectionLostError(description: "the PostgreSQL connection is closed") }
        return try await withAbandonment(
            when: { abandon in ConnectionWatch.start(connection: { self }, limit: limit, abandon: abandon) },
            operation: operation)
    }

    /// Closes the connection and returns once it is closed. Given back to the pool while still
    /// closing, it would be leased again and fail the next statement at once (PostgresNIO's
    /// `clientClosedConnection`), which nothing could have told from a refused one.
    func closeForGood() async {
        try? await close()
        try? await closeFuture.get()
    }
}
