import Logging
import ParleyCore
import ServiceLifecycle

/// A bounded pool of Redis connections that reconnects by itself.
///
/// A connection that hits an I/O error is dropped and a fresh one is opened on the next
/// lease, so a Redis restart costs the commands in flight at that moment and nothing else.
public actor RedisConnectionPool: Service {
    public let configuration: RedisConfiguration
    private let logger: Logger
    private var idle: [RedisConnection] = []
    /// Connections open or being opened, leased or idle.
    private var open = 0
    /// Callers waiting for a connection: they get an idle one, or `nil` meaning "a slot is
    /// free, open a connection yourself". A cancelled caller leaves the line at once.
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<RedisConnection?, any Error>)] = []
    private var nextWaiter: UInt64 = 0
    private var closed = false

    public init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Keeps the pool until graceful shutdown, then closes every connection.
    public func run() async throws {
        try? await gracefulShutdown()
        close()
    }

    /// Sends one command on any connection.
    public func send(_ arguments: String...) async throws -> RedisValue {
        try await send(arguments)
    }

    public func send(_ arguments: [String]) async throws -> RedisValue {
        let connection = try await lease()
        defer { release(connection) }
        // An error reply leaves a single-command connection as good as before.
        return try await connection.send(arguments)
    }

    /// Pipelines commands on one connection; see ``RedisConnection/pipeline(_:)``.
    public func pipeline(_ commands: [[String]]) async throws -> [Result<RedisValue, RedisError>] {
        guard !commands.isEmpty else { return [] }
        return try await withConnection { try await $0.pipeline(commands) }
    }

    /// Runs several commands on one connection (transactions, blocking reads). When `body`
    /// throws, the connection may be mid-transaction, so it is closed rather than reused.
    public func withConnection<Result: Sendable>(
        _ body: (RedisConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await lease()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            connection.discard()
            release(connection, reusable: false)
            throw error
        }
    }

    /// Closes idle connections and fails everyone waiting; leased ones close when returned.
    public func close() {
        closed = true
        open -= idle.count
        idle.removeAll()
        for waiter in waiters { waiter.continuation.resume(throwing: RedisError.closed) }
        waiters.removeAll()
    }

    private func lease() async throws -> RedisConnection {
        guard !closed else { throw RedisError.closed }
        if let connection = idle.popLast() { return connection }
        if open < configuration.maximumConnections {
            open += 1
            return try await connectInSlot()
        }
        nextWaiter += 1
        let id = nextWaiter
        let handed: RedisConnection? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Cancelled before it got in line: the handler below found nothing to cancel.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
        if let handed { return handed }
        return try await connectInSlot()
    }

    private func cancelWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    private func connectInSlot() async throws -> RedisConnection {
        do {
            return try await RedisConnection.connect(configuration)
        } catch {
            logger.warning("Redis connection failed", metadata: ["error": "\(error)"])
            freeSlot()
            throw error
        }
    }

    private func release(_ connection: RedisConnection, reusable: Bool = true) {
        guard reusable, !connection.isBroken, !closed else {
            freeSlot()
            return
        }
        if waiters.isEmpty {
            idle.append(connection)
        } else {
            waiters.removeFirst().continuation.resume(returning: connection)
        }
    }

    private func freeSlot() {
        if waiters.isEmpty || closed {
            open -= 1
        } else {
            waiters.removeFirst().continuation.resume(returning: nil)
        }
    }
}

/// Readiness probe: Redis answers `PING`.
public struct RedisProbe: DependencyProbe {
    public let name = "redis"
    let pool: RedisConnectionPool

    public init(pool: RedisConnectionPool) { self.pool = pool }

    public func probe() async throws {
        let reply = try await pool.send("PING")
        guard reply == .status("PONG") else { throw RedisError.connection("unexpected PING reply") }
    }
}
