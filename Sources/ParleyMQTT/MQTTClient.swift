import CMosquitto
import Dispatch
import Logging
import ParleyCore
import ParleyRuntime
import ServiceLifecycle
import Synchronization

/// An MQTT 5 client over libmosquitto.
///
/// libmosquitto's own network thread does the I/O and reconnects with back-off after the
/// broker goes away; this type re-subscribes every filter on each reconnect, turns
/// acknowledgements into `async` results and delivers messages into ``messages`` (or to a
/// handler routed by topic prefix).
public final class MQTTClient: Service, Sendable {
    public let configuration: MQTTConfiguration
    /// Every message received on any subscription that no route takes, in arrival order,
    /// bounded (``MQTTConfiguration/inboxCapacity``). One consumer.
    public let messages: MQTTInbox
    /// Holds what the client sends while a received message is unsettled; open unless a
    /// receiver uses it (the ingest's client only: its own publishes would wait too).
    public let acknowledgementGate: AcknowledgementGate

    let logger: Logger
    let state = Mutex(MQTTClientState())
    /// The libmosquitto handle; libmosquitto's threaded API may be called from any thread.
    nonisolated(unsafe) let handle: OpaquePointer
    /// The thread that does the handle's network input and output.
    let network: MQTTNetworkLoop
    /// The connection's socket (-1 while none): for tests that read its TCP counters.
    var socketDescriptor: Int32 { mosquitto_socket(handle) }

    public init(configuration: MQTTConfiguration, logger: Logger) throws {
        MQTTLibrary.initialise()
        self.configuration = configuration
        self.logger = logger
        guard let handle = mosquitto_new(configuration.clientID, configuration.sessionExpiry == nil, nil) else {
            throw MQTTError(code: MOSQ_ERR_NOMEM.rawValue, message: "mosquitto_new failed")
        }
        self.handle = handle
        do {
            network = try MQTTNetworkLoop(handle: handle, logger: logger)
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
        messages = MQTTInbox(capacity: configuration.inboxCapacity) { [network] in network.wake() }
        acknowledgementGate = AcknowledgementGate(readPauseAfter: configuration.readPauseAfterHolding) {
            [network] in network.wake()
        }
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        do {
            try configure()
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
        installCallbacks()
    }

    deinit {
        // The loop calls back into this client: it ends before the handle goes. A loop that
        // did not end (stuck inside libmosquitto) keeps the handle: destroying it under the
        // thread crashed a worker stopped after a stall in the chaos run.
        if network.stop() { mosquitto_destroy(handle) }
    }

    private func configure() throws {
        try MQTTError.check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5))
        // Parley's own thread runs the network loop (MQTTNetworkLoop); callers on other threads.
        try MQTTError.check(mosquitto_threaded_set(handle, true))
        // Events are small writes that must go out now: Nagle's algorithm would hold one back
        // until the broker's delayed ACK of the last (about 40 ms on Linux).
        try MQTTError.check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1))
        if let receiveMaximum = configuration.receiveMaximum {
            try MQTTError.check(mosquitto_int_option(handle, MOSQ_OPT_RECEIVE_MAXIMUM, Int32(receiveMaximum)))
        }
        if configuration.username != nil || configuration.password != nil {
            try MQTTError.check(mosquitto_username_pw_set(handle, configuration.username, configuration.password))
        }
        if configuration.tls {
            try MQTTError.check(mosquitto_tls_set(handle, configuration.caFile, nil, nil, nil, nil))
            try MQTTError.check(mosquitto_tls_insecure_set(handle, configuration.tlsInsecure))
        }
    }

    /// Whether the broker session is up now.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Why the broker refused the last login (`Bad user name or password`, `Not authorized`),
    /// until one succeeds; nil when it refused none.
    public var refusal: String? {
        guard let code = state.withLock({ $0.refusal }) else { return nil }
        // MQTT 5 reason codes start at 0x80; smaller ones are MQTT 3's CONNACK codes.
        let text = code >= 0x80 ? mosquitto_reason_string(code) : mosquitto_connack_string(code)
        return text.map { String(cString: $0) } ?? "code \(code)"
    }

    /// Starts the network thread and the first connection attempt; later attempts follow
    /// by themselves until ``shutdown()``.
    public func start() throws {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        network.start(
            host: configuration.host, port: Int32(configuration.port),
            keepAlive: Int32(configuration.keepAlive.components.seconds),
            sessionExpiry: configuration.sessionExpiry.map { UInt32(clamping: $0.components.seconds) },
            mayRead: { [weak self] in self?.mayRead ?? false },
            // Before the CONNACK only the CONNECT is queued: a reconnect drops the old queue.
            mayWrite: { [weak self] in self.map { $0.acknowledgementGate.isOpen || !$0.isConnected } ?? true })
    }

    /// Whether the network loop may read: room in the inbox, and the gate not shut for too
    /// long (``AcknowledgementGate/pausesReading``), unless a new connection waits for its
    /// CONNACK behind a batch of the lost one. Asked on every pass of the loop: the connection
    /// state's lock only when the gate would pause.
    private var mayRead: Bool {
        !messages.isFull && (!acknowledgementGate.pausesReading || !isConnected)
    }

    /// Reads nothing more from the broker (it keeps what it would send, as for a slow
    /// subscriber): a consumer stopping takes no message it could not finish. On return no
    /// message is being read: every one taken has reached its route.
    public func stopReading() {
        network.stopReading()
    }

    /// Calls `handler` on the network thread each time the connection is lost: what was
    /// received and not acknowledged will come again on the next connection.
    public func onConnectionLost(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.connectionLost.append(handler) }
    }

    /// Waits until connected, or throws ``MQTTError/timeout``.
    public func waitUntilConnected(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !isConnected {
            guard ContinuousClock.now < deadline else { throw MQTTError.timeout }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Connects, runs until graceful shutdown, then disconnects cleanly.
    public func run() async throws {
        try start()
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Disconnects, stops the network thread and ends ``messages``. Idempotent.
    ///
    /// Joining libmosquitto's thread blocks, so it happens on a thread of its own rather than
    /// one of Swift concurrency's few threads (which `DispatchQueue.global()` shares on Linux).
    public func shutdown() async {
        await BlockingCall.run("mqtt-shutdown") { self.shutdownNow() }
    }

    private func shutdownNow() {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.shutDown = true }
            return state.started && !state.shutDown
        }
        guard wasRunning else { return }
        mosquitto_disconnect(handle)
        network.stop()
        // A batch's waiter is there once per id; `finish` hands its continuation out once.
        let waiting = state.withLock { state in Array(state.pending.values).compactMap { state.finish($0) } }
        for continuation in waiting { continuation.resume(throwing: MQTTError.closed) }
        messages.finish()
    }
}

/// Process-wide libmosquitto initialisation, done once.
enum MQTTLibrary {
    private static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    static func initialise() { _ = initialised }
}

/// Readiness probe: the server's broker session is up.
public struct MQTTProbe: DependencyProbe {
    public let name: String
    let client: MQTTClient

    public init(client: MQTTClient, name: String = "mqtt") {
        self.client = client
        self.name = name
    }

    public func probe() async throws {
        guard client.isConnected else { throw MQTTError.notConnected }
    }
}
