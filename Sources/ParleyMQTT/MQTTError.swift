import CMosquitto
import ParleyCore

/// A failure reported by libmosquitto or by waiting on the broker.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public var description: String { "MQTT error \(code): \(message)" }

    /// Not connected to the broker right now (it reconnects by itself).
    public static let notConnected = MQTTError(code: MOSQ_ERR_NO_CONN.rawValue, message: "not connected")
    /// The broker did not acknowledge in time.
    public static let timeout = MQTTError(code: -100, message: "no acknowledgement from the broker in time")
    /// The client was shut down.
    public static let closed = MQTTError(code: -101, message: "client is shut down")
    /// The broker took the message but no subscriber matched (PUBACK 0x10): nobody will read it.
    public static let noSubscribers = MQTTError(code: -103, message: "no subscriber took the message (0x10)")

    /// The broker refused a publish or a subscription with this MQTT 5 reason code.
    static func refused(_ reasonCode: Int32) -> MQTTError {
        MQTTError(code: -102, message: "refused by the broker (reason code 0x\(String(reasonCode, radix: 16)))")
    }

    /// The one checked-call helper: turns a libmosquitto return code into a thrown error.
    static func check(_ code: Int32) throws {
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return }
        if code == MOSQ_ERR_NO_CONN.rawValue { throw notConnected }
        throw MQTTError(code: code, message: String(cString: mosquitto_strerror(code)))
    }
}

extension MQTTError: DependencyError {
    /// No broker session, no acknowledgement in time, or a client shut down; not a refusal.
    public var isUnavailability: Bool {
        [Self.notConnected.code, Self.timeout.code, Self.closed.code, Self.noSubscribers.code].contains(code)
    }
}
