import NIOCore

/// The MQTT protocol level a connection speaks, as CONNECT names it.
public enum MQTTVersion: UInt8, Sendable, CaseIterable {
    case v3_1_1 = 4
    case v5 = 5
}

/// How often a message may be delivered: at most once, at least once, exactly once.
public enum MQTTQoS: UInt8, Sendable, Comparable, CaseIterable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One MQTT control packet, of either version; the fields only MQTT 5 has (properties, reason
/// codes other than success) must stay empty for 3.1.1, or encoding throws.
public enum MQTTPacket: Equatable, Sendable {
    case connect(Connect)
    case connack(Connack)
    case publish(Publish)
    case puback(Acknowledgement)
    case pubrec(Acknowledgement)
    case pubrel(Acknowledgement)
    case pubcomp(Acknowledgement)
    case subscribe(Subscribe)
    case suback(Suback)
    case unsubscribe(Unsubscribe)
    case unsuback(Unsuback)
    case pingreq
    case pingresp
    case disconnect(Disconnect)
    /// MQTT 5 only: enhanced authentication.
    case auth(Auth)

    public struct Will: Equatable, Sendable {
        public var topic: String
        public var payload: ByteBuffer
        public var qos: MQTTQoS
        public var retain: Bool
        public var properties: MQTTProperties

        public init(
            topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false,
            properties: MQTTProperties = []
        ) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
            self.properties = properties
        }
    }

    public struct Connect: Equatable, Sendable {
        public var version: MQTTVersion
        public var clientID: String
        /// 3.1.1's clean session, 5's clean start.
        public var cleanStart: Bool
        /// Seconds; 0 turns keep-alive off.
        public var keepAlive: UInt16
        public var username: String?
        public var password: ByteBuffer?
        public var will: Will?
        public var properties: MQTTProperties

        public init(
            version: MQTTVersion, clientID: String, cleanStart: Bool = true, keepAlive: UInt16 = 60,
            username: String? = nil, password: ByteBuffer? = nil, will: Will? = nil, properties: MQTTProperties = []
        ) {
            self.version = version
            self.clientID = clientID
            self.cleanStart = cleanStart
            self.keepAlive = keepAlive
            self.username = username
            self.password = password
            self.will = will
            self.properties = properties
        }
    }

    public struct Connack: Equatable, Sendable {
        public var sessionPresent: Bool
        /// 3.1.1's return code (0 accepted, 1–5 refused), 5's reason code (below 0x80 success).
        public var reasonCode: UInt8
        public var properties: MQTTProperties

        public init(sessionPresent: Bool = false, reasonCode: UInt8 = 0, properties: MQTTProperties = []) {
            self.sessionPresent = sessionPresent
            self.reasonCode = reasonCode
            self.properties = properties
        }
    }

    public struct Publish: Equatable, Sendable {
        public var topic: String
        public var payload: ByteBuffer
        public var qos: MQTTQoS
        public var retain: Bool
        public var duplicate: Bool
        /// Present exactly when `qos` is above at most once.
        public var packetID: UInt16?
        public var properties: MQTTProperties

        public init(
            topic: String, payload: ByteBuffer, qos: MQTTQoS = .atMostOnce, retain: Bool = false,
            duplicate: Bool = false, packetID: UInt16? = nil, properties: MQTTProperties = []
        ) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
            self.duplicate = duplicate
            self.packetID = packetID
            self.properties = properties
        }
    }

    /// PUBACK, PUBREC, PUBREL and PUBCOMP.
    public struct Acknowledgement: Equatable, Sendable {
        public var packetID: UInt16
        /// MQTT 5; 0 (success) in 3.1.1.
        public var reasonCode: UInt8
        public var properties: MQTTProperties

        public init(packetID: UInt16, reasonCode: UInt8 = 0, properties: MQTTProperties = []) {
            self.packetID = packetID
            self.reasonCode = reasonCode
            self.properties = properties
        }
    }

    public struct Subscription: Equatable, Sendable {
        public var topicFilter: String
        public var qos: MQTTQoS
        /// MQTT 5: not to receive one's own publications on this subscription.
        public var noLocal: Bool
        /// MQTT 5: keep the retain flag as published.
        public var retainAsPublished: Bool
        /// MQTT 5: 0 send retained messages, 1 only for a new subscription, 2 never.
        public var retainHandling: UInt8

        public init(
            topicFilter: String, qos: MQTTQoS, noLocal: Bool = false, retainAsPublished: Bool = false,
            retainHandling: UInt8 = 0
        ) {
            self.topicFilter = topicFilter
            self.qos = qos
            self.noLocal = noLocal
            self.retainAsPublished = retainAsPublished
            self.retainHandling = retainHandling
        }
    }

    public struct Subscribe: Equatable, Sendable {
        public var packetID: UInt16
        public var subscriptions: [Subscription]
        public var properties: MQTTProperties

        public init(packetID: UInt16, subscriptions: [Subscription], properties: MQTTProperties = []) {
            self.packetID = packetID
            self.subscriptions = subscriptions
            self.properties = properties
        }
    }

    public struct Suback: Equatable, Sendable {
        public var packetID: UInt16
        /// One per subscription, in order: the QoS granted, or 0x80 and above for a refusal.
        public var reasonCodes: [UInt8]
        public var properties: MQTTProperties

        public init(packetID: UInt16, reasonCodes: [UInt8], properties: MQTTProperties = []) {
            self.packetID = packetID
            self.reasonCodes = reasonCodes
            self.properties = properties
        }
    }

    public struct Unsubscribe: Equatable, Sendable {
        public var packetID: UInt16
        public var topicFilters: [String]
        public var properties: MQTTProperties

        public init(packetID: UInt16, topicFilters: [String], properties: MQTTProperties = []) {
            self.packetID = packetID
            self.topicFilters = topicFilters
            self.properties = properties
        }
    }

    public struct Unsuback: Equatable, Sendable {
        public var packetID: UInt16
        /// MQTT 5: one per topic filter; empty in 3.1.1.
        public var reasonCodes: [UInt8]
        public var properties: MQTTProperties

        public init(packetID: UInt16, reasonCodes: [UInt8] = [], properties: MQTTProperties = []) {
            self.packetID = packetID
            self.reasonCodes = reasonCodes
            self.properties = properties
        }
    }

    public struct Disconnect: Equatable, Sendable {
        /// MQTT 5; 0 (normal) in 3.1.1.
        public var reasonCode: UInt8
        public var properties: MQTTProperties

        public init(reasonCode: UInt8 = 0, properties: MQTTProperties = []) {
            self.reasonCode = reasonCode
            self.properties = properties
        }
    }

    public struct Auth: Equatable, Sendable {
        public var reasonCode: UInt8
        public var properties: MQTTProperties

        public init(reasonCode: UInt8 = 0, properties: MQTTProperties = []) {
            self.reasonCode = reasonCode
            self.properties = properties
        }
    }
}
