import Logging
import ServiceLifecycle
import Synchronization

/// Listens to one Redis pub/sub channel on a dedicated connection, reconnecting after
/// failures, and reports whether it is listening: while it is not, messages may be missed,
/// and whoever relies on them (a cache) must not trust what it holds.
public final class RedisSubscriber: Service, Sendable {
    let configuration: RedisConfiguration
    let channel: String
    let logger: Logger
    let onMessage: @Sendable (String) -> Void
    let onListening: @Sendable (Bool) -> Void
    private let current = Mutex<RedisConnection?>(nil)

    public init(
        configuration: RedisConfiguration, channel: String, logger: Logger,
        onListening: @escaping @Sendable (Bool) -> Void, onMessage: @escaping @Sendable (String) -> Void
    ) {
        self.configuration = configuration
        self.channel = channel
        self.logger = logger
        self.onListening = onListening
        self.onMessage = onMessage
    }

    public func run() async throws {
        try await withGracefulShutdownHandler {
            var delay = Duration.milliseconds(100)
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                do {
                    try await listen()
                } catch {
                    onListening(false)
                    if Task.isShuttingDownGracefully || Task.isCancelled { break }
                    logger.warning("Redis subscription lost; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(5))
                    continue
                }
                delay = .milliseconds(100)
            }
        } onGracefulShutdown: {
            self.current.withLock { $0?.interrupt() }
        }
        onListening(false)
    }

    private func listen() async throws {
        let connection = try await RedisConnection.connect(configuration, blocking: true)
        current.withLock { $0 = connection }
        defer { current.withLock { $0 = nil } }
        if Task.isShuttingDownGracefully { return }
        _ = try await connection.send(["SUBSCRIBE", channel])
        onListening(true)
        while true {
            let reply = try await connection.nextReply()
            // ["message", channel, payload]
            if let parts = reply.array, parts.count == 3, parts[0].string == "message", let payload = parts[2].string {
                onMessage(payload)
            }
        }
    }
}
