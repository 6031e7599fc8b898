import NIOCore

/// How long to wait before connecting again: exponential, capped, with full jitter (a random
/// wait up to the cap), so clients a broker restart dropped together do not return together.
public struct MQTTBackoff: Sendable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The cap for the `attempt`-th retry in a row (0 first): `initial` doubled each time, at most `maximum`.
    public func cap(attempt: Int) -> Duration {
        let doubled = initial * (1 << min(attempt, 30))
        return min(doubled, maximum)
    }

    public func delay(attempt: Int) -> Duration {
        var random = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &random)
    }

    public func delay(attempt: Int, using random: inout some RandomNumberGenerator) -> Duration {
        let cap = cap(attempt: attempt)
        let nanoseconds = cap.components.seconds * 1_000_000_000 + cap.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: 0...max(0, nanoseconds), using: &random))
    }
}

/// A broker connection kept up: it reconnects after any loss with ``MQTTBackoff``, asks for
/// the CONNECT afresh each time (a token that expired is replaced), subscribes again when the
/// broker kept no session, and hands on the deliveries of every connection in one stream.
public actor MQTTLink {
    public enum State: Sendable, Equatable {
        case connecting
        /// Connected, with every subscription in place again.
        case connected(sessionPresent: Bool)
        case waiting(retryIn: Duration)
        case stopped
    }

    /// Every connection's deliveries, in order; ends when the link stops.
    public nonisolated let deliveries: AsyncStream<MQTTPacket.Publish>
    /// The link's state as it changes.
    public nonisolated let states: AsyncStream<State>
    private let deliveriesInput: AsyncStream<MQTTPacket.Publish>.Continuation
    private let statesInput: AsyncStream<State>.Continuation
    private let endpoint: MQTTEndpoint
    private let backoff: MQTTBackoff
    private let makeConnect: @Sendable () async throws -> MQTTPacket.Connect
    private var subscriptions: [String: MQTTPacket.Subscription] = [:]
    private var connection: MQTTConnection?
    private var running: Task<Void, Never>?

    public init(
        endpoint: MQTTEndpoint, backoff: MQTTBackoff = .init(),
        connect: @escaping @Sendable () async throws -> MQTTPacket.Connect
    ) {
        self.endpoint = endpoint
        self.backoff = backoff
        self.makeConnect = connect
        (deliveries, deliveriesInput) = AsyncStream.makeStream(of: MQTTPacket.Publish.self)
        (states, statesInput) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(16))
    }

    /// Starts connecting, and keeps connecting until ``stop()``.
    public func start() {
        guard running == nil else { return }
        running = Task { await self.run() }
    }

    /// Disconnects and stops reconnecting; the streams end.
    public func stop() async {
        running?.cancel()
        await connection?.disconnect()
        await running?.value
        running = nil
    }

    /// Subscribes now if connected, and on every later connection the broker kept no session for.
    @discardableResult
    public func subscribe(_ list: [MQTTPacket.Subscription]) async throws -> [UInt8]? {
        for subscription in list { subscriptions[subscription.topicFilter] = subscription }
        return try await connection?.subscribe(list)
    }

    public func unsubscribe(_ topicFilters: [String]) async throws {
        for filter in topicFilters { subscriptions[filter] = nil }
        _ = try await connection?.unsubscribe(topicFilters)
    }

    /// Publishes on the current connection; throws ``MQTTConnectionError/closed`` while there is
    /// none (the caller decides: wait, or send another way).
    @discardableResult
    public func publish(_ publication: MQTTPacket.Publish) async throws -> UInt8 {
        guard let connection else { throw MQTTConnectionError.closed }
        return try await connection.publish(publication)
    }

    private func run() async {
        var attempt = 0
        while !Task.isCancelled {
            statesInput.yield(.connecting)
            do {
                let current = try await MQTTConnection.connect(to: endpoint, as: try await makeConnect())
                connection = current
                attempt = 0
                if !current.connack.sessionPresent, !subscriptions.isEmpty {
                    _ = try await current.subscribe(Array(subscriptions.values))
                }
                // Told once the subscriptions are back: what is published from then on arrives.
                statesInput.yield(.connected(sessionPresent: current.connack.sessionPresent))
                for await publication in current.deliveries { deliveriesInput.yield(publication) }
                // Stopped while connected (or while connecting): leave the broker properly.
                if Task.isCancelled { await current.disconnect() }
            } catch {
                // Refused, unreachable or dropped: all are retried after the backoff.
            }
            connection = nil
            guard !Task.isCancelled else { break }
            let delay = backoff.delay(attempt: attempt)
            attempt += 1
            statesInput.yield(.waiting(retryIn: delay))
            try? await Task.sleep(for: delay)
        }
        statesInput.yield(.stopped)
        statesInput.finish()
        deliveriesInput.finish()
    }
}
