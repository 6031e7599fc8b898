import Foundation
import Logging
import ParleyCore
import ParleyMQTT

/// MQTT clients of a chat benchmark: one per member, each subscribed to its room, recording
/// the latency of every message another member sent.
///
/// A message's `uid` carries its step, sender and intended send time
/// (`s{step}-{sender}-{nanoseconds}-{n}`), so a receiver needs no shared table and a late
/// arrival counts for the step that sent it.
final class ChatClients: Sendable {
    let clients: [MQTTClient]
    let recorders: [LatencyRecorder]
    private let consumers: [Task<Void, Never>]

    /// - Parameters:
    ///   - credentials: per member: client id, user name, password (nil for anonymous).
    ///   - topics: per member, the filters it subscribes to (its room first).
    init(
        host: String, port: Int, credentials: [(clientID: String, username: String?, password: String?)],
        topics: [[String]], steps: Int
    ) async throws {
        var logger = Logger(label: "parley-load.mqtt")
        logger.logLevel = .error
        let recorders = (0..<steps).map { _ in LatencyRecorder() }
        var clients: [MQTTClient] = []
        var consumers: [Task<Void, Never>] = []
        for (index, credential) in credentials.enumerated() {
            let client = try MQTTClient(
                configuration: MQTTConfiguration(
                    host: host, port: port, username: credential.username, password: credential.password,
                    clientID: credential.clientID, keepAlive: .seconds(60), acknowledgementTimeout: .seconds(30)),
                logger: logger)
            try client.start()
            clients.append(client)
            consumers.append(
                Task {
                    for await message in client.messages where message.topic.hasPrefix(Topic.roomPrefix) {
                        guard let stamp = SendStamp(payload: message.payload), stamp.sender != index,
                            recorders.indices.contains(stamp.step)
                        else { continue }
                        recorders[stamp.step].record(sinceIntended: stamp.intended)
                    }
                })
        }
        self.clients = clients
        self.recorders = recorders
        self.consumers = consumers
        for (index, (client, filters)) in zip(clients, topics).enumerated() {
            do {
                try await client.waitUntilConnected(timeout: .seconds(30))
                for filter in filters { try await client.subscribe(filter, qos: 1) }
            } catch {
                throw LoadError("client \(index) (\(credentials[index].clientID)) of \(host):\(port): \(error)")
            }
        }
    }

    func shutdown() async {
        for client in clients { await client.shutdown() }
        for consumer in consumers { consumer.cancel() }
    }
}

/// What a benchmark message's `uid` says about its sending.
struct SendStamp {
    let step: Int
    let sender: Int
    let intended: UInt64

    static func uid(step: Int, sender: Int, intended: UInt64, index: Int) -> String {
        "s\(step)-\(sender)-\(intended)-\(index)"
    }

    /// Finds `"uid":"s…"` in a JSON payload without decoding the rest of it.
    init?(payload: [UInt8]) {
        let marker = Array(#""uid":"s"#.utf8)
        guard let start = payload.firstRange(of: marker)?.upperBound else { return nil }
        var fields: [UInt64] = []
        var value: UInt64 = 0
        for byte in payload[start...] {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "-"):
                fields.append(value)
                value = 0
            default:
                fields.append(value)
                guard fields.count == 4 else { return nil }
                step = Int(fields[0])
                sender = Int(fields[1])
                intended = fields[2]
                return
            }
        }
        return nil
    }
}
