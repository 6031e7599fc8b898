/// How a Parley process connects to the MQTT broker as the server's own identity.
public struct MQTTConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var username: String?
    /// Secret.
    public var password: String?
    /// Client id; a random suffix keeps several processes from taking over each other's session.
    public var clientID: String
    public var keepAlive: Duration
    /// Encrypt the connection; `caFile` names the certificate authority to trust.
    public var tls: Bool
    public var caFile: String?
    /// Accept a certificate whose name does not match `host` (self-signed local setups only).
    public var tlsInsecure: Bool
    /// How long `publish` and `subscribe` wait for the broker's acknowledgement.
    public var acknowledgementTimeout: Duration
    /// How long the broker keeps the session (subscriptions, queued QoS 1 messages) after a
    /// disconnect; nil ends it with the connection (a clean start every time). A kept session
    /// needs a client id that stays the same across reconnects and restarts.
    public var sessionExpiry: Duration?
    /// Received messages that may wait unread in ``MQTTClient/messages`` before the client
    /// stops reading from the broker (which then holds the rest).
    public var inboxCapacity: Int
    /// MQTT 5 Receive Maximum: QoS 1 messages the broker may send before their
    /// acknowledgements; nil leaves libmosquitto's 20. A client whose acknowledgements wait
    /// for storage (``MQTTClient/acknowledgementGate``) needs more, or the broker stalls.
    public var receiveMaximum: Int?
    /// How long the client's ``MQTTClient/acknowledgementGate`` may stay shut before the client
    /// stops reading until it opens, so that its writes (the keep-alive's among them) go out
    /// well within the broker's keep-alive of 1.5 times ``keepAlive``.
    public var readPauseAfterHolding: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 1883,
        username: String? = nil,
        password: String? = nil,
        clientID: String = "parley",
        keepAlive: Duration = .seconds(30),
        tls: Bool = false,
        caFile: String? = nil,
        tlsInsecure: Bool = false,
        acknowledgementTimeout: Duration = .seconds(10),
        sessionExpiry: Duration? = nil,
        inboxCapacity: Int = 10_000,
        receiveMaximum: Int? = nil,
        readPauseAfterHolding: Duration = .seconds(1)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.clientID = clientID
        self.keepAlive = keepAlive
        self.tls = tls
        self.caFile = caFile
        self.tlsInsecure = tlsInsecure
        self.acknowledgementTimeout = acknowledgementTimeout
        self.sessionExpiry = sessionExpiry
        self.inboxCapacity = inboxCapacity
        self.receiveMaximum = receiveMaximum
        self.readPauseAfterHolding = readPauseAfterHolding
    }
}

/// A message received on a subscription.
public struct MQTTMessage: Sendable, Equatable {
    public let topic: String
    public let payload: [UInt8]
    public let qos: Int
    public let retain: Bool
    /// MQTT 5 user properties (the broker plugin stamps `parley-user` on client input).
    public let userProperties: [String: String]

    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool, userProperties: [String: String] = [:]) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.userProperties = userProperties
    }
}
