import Foundation
import Logging
import ParleyCore
import ParleyMQTT
import Synchronization

/// The chaos load's clients and what they send: one MQTT client per user (a kept session, so
/// a broker restart loses nothing queued for it), and one HTTP/2 connection per user for its
/// REST sends, as apps have. (Through one connection for all, its 100 streams filled during a
/// fault and the client's queue behind them cost the generator more CPU than the stack used.)
final class ChaosTraffic: Sendable {
    private let rooms: [ChaosRoom]
    private let roomsByUID: [String: ChaosRoom]
    private let clients: [Int64: MQTTClient]
    private let users: [Int64: BenchUser]
    /// Who reads, and the room whose history they read: users who write nothing meanwhile.
    private let readers: (users: [BenchUser], room: Int64)
    private let tokens: Mutex<[Int64: String]>
    private let tag: String
    private let api: ParleyRESTClient
    /// Each user's own connection for sends.
    private let rest: [Int64: ParleyRESTClient]
    private let log: ChaosLog
    private let stopping = Atomic<Bool>(false)
    private let attemptCount = Atomic<Int>(0)
    /// Acknowledged uids with the members who must receive them, and who did.
    private let expected = Mutex<[String: Set<Int64>]>([:])
    private let seen = Mutex<[String: Set<Int64>]>([:])
    /// MQTT sends by uid, for a republish after `unavailable`.
    private let mqttSends = Mutex<[String: (room: ChaosRoom, sender: Int64, payload: [UInt8])]>([:])
    private let latestSeq = Mutex<[Int64: Int64]>([:])
    private let retries = Mutex<[Task<Void, Never>]>([])
    private let consumers = Mutex<[Task<Void, Never>]>([])

    var attempts: Int { attemptCount.load(ordering: .relaxed) }

    init(
        rooms: [ChaosRoom], users: [BenchUser], readers: (users: [BenchUser], room: Int64), tag: String,
        api: ParleyRESTClient, target: TargetOptions, log: ChaosLog
    ) async throws {
        self.rooms = rooms
        self.readers = readers
        roomsByUID = Dictionary(uniqueKeysWithValues: rooms.map { ($0.uid, $0) })
        self.users = Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0) })
        tokens = Mutex(Dictionary(uniqueKeysWithValues: users.map { ($0.id, $0.login.accessToken) }))
        self.tag = tag
        self.api = api
        rest = Dictionary(
            uniqueKeysWithValues: users.map { ($0.id, ParleyRESTClient(baseURL: target.api, caFile: target.caFile)) })
        self.log = log
        var logger = Logger(label: "parley-load.chaos")
        logger.logLevel = .critical
        var clients: [Int64: MQTTClient] = [:]
        for user in users {
            clients[user.id] = try MQTTClient(
                configuration: MQTTConfiguration(
                    host: target.mqttHost, port: target.mqttPort, username: user.login.mqtt.username,
                    password: user.login.mqtt.password, clientID: user.login.mqtt.clientId, keepAlive: .seconds(10),
                    acknowledgementTimeout: .seconds(5), sessionExpiry: .seconds(3600)),
                logger: logger)
        }
        self.clients = clients
        for (id, client) in clients {
            try client.start()
            let consumer = Task { [self] in await consume(client.messages, receiver: id) }
            consumers.withLock { $0.append(consumer) }
        }
        for room in rooms {
            for member in room.members {
                guard let client = clients[member.id] else { continue }
                try await client.waitUntilConnected(timeout: .seconds(30))
                try await client.subscribe(Topic.room(room.uid), qos: 1)
                try await client.subscribe(Topic.notifications(member.id), qos: 1)
            }
        }
    }

    /// Sends `rate` messages a second, alternating MQTT and REST, and makes `readRate` reads a
    /// second, until `stop` says so; then waits for the sends still being retried to give up.
    func send(rate: Double, readRate: Double, until stop: @escaping @Sendable () -> Bool) async {
        await withTaskGroup(of: Void.self) { group in
            if readRate > 0, !readers.users.isEmpty { group.addTask { await self.reads(rate: readRate, until: stop) } }
            var lastExtras = ContinuousClock.now
            await Self.paced(rate: rate, until: stop) { index, now in
                group.addTask { await self.message(index) }
                if now - lastExtras >= .seconds(1) {
                    lastExtras = now
                    group.addTask { await self.extras(index) }
                }
            }
            stopping.store(true, ordering: .relaxed)
            await group.waitForAll()
        }
        for task in retries.withLock({ $0 }) { await task.value }
    }

    /// Waits until every acknowledged message reached every other member of its room, or the
    /// time is up; answers how many deliveries are still missing.
    func drain(within limit: Duration) async -> Int {
        let deadline = ContinuousClock.now + limit
        while true {
            let missing = missingDeliveries()
            if missing == 0 || ContinuousClock.now >= deadline { return missing }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    func shutdown() async {
        for task in consumers.withLock({ $0 }) { task.cancel() }
        for client in clients.values { await client.shutdown() }
        for client in rest.values { await client.shutdown() }
    }

    private func missingDeliveries() -> Int {
        let expected = self.expected.withLock { $0 }
        let seen = self.seen.withLock { $0 }
        return expected.reduce(0) { total, entry in total + entry.value.subtracting(seen[entry.key] ?? []).count }
    }

    // MARK: Messages

    private func message(_ index: Int) async {
        let room = rooms[index % rooms.count]
        let sender = room.members[(index / rooms.count) % room.members.count].id
        let uid = "c-\(tag)-\(index)"
        if index % 2 == 0 {
            await untilAcknowledged(uid: uid, room: room, sender: sender, via: "mqtt") {
                await self.publish(uid: uid, room: room, sender: sender)
            }
        } else {
            await untilAcknowledged(uid: uid, room: room, sender: sender, via: "rest") {
                await self.post(uid: uid, room: room, sender: sender)
            }
        }
    }

    /// Tries `attempt` every half second until it is acknowledged or the load stops.
    private func untilAcknowledged(
        uid: String, room: ChaosRoom, sender: Int64, via: String, _ attempt: () async -> Bool
    ) async {
        while !stopping.load(ordering: .relaxed) {
            attemptCount.add(1, ordering: .relaxed)
            if await attempt() {
                acknowledge(uid: uid, room: room, sender: sender, via: via)
                return
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    private func acknowledge(uid: String, room: ChaosRoom, sender: Int64, via: String) {
        log.sent(room: room.id, uid: uid, sender: sender, via: via)
        expected.withLock { $0[uid] = Set(room.members.map(\.id)).subtracting([sender]) }
    }

    private func publish(uid: String, room: ChaosRoom, sender: Int64) async -> Bool {
        guard let client = clients[sender] else { return false }
        let payload =
            mqttSends.withLock({ $0[uid]?.payload })
            ?? Array(
                #"{"type":"new-message-notification","data":{"chatRoomId":\#(room.id),"content":"chaos \#(uid)","uid":"\#(uid)"},"hash":"h-\#(uid)"}"#
                    .utf8)
        mqttSends.withLock { $0[uid] = (room, sender, payload) }
        do {
            // 0x10: no ingest took it; an app publishes it again, as after no PUBACK.
            try await client.publish(topic: Topic.chatIn(room.uid), payload: payload, qos: 1, requireSubscriber: true)
            return true
        } catch {
            log.error(uid: uid, via: "mqtt", "\(error)")
            return false
        }
    }

    private func post(uid: String, room: ChaosRoom, sender: Int64) async -> Bool {
        let body = Data(#"{"content":"chaos \#(uid)","uid":"\#(uid)"}"#.utf8)
        do {
            let token = tokens.withLock { $0[sender] }
            let answer = try await (rest[sender] ?? api).send(
                .POST, "/v1/rooms/\(room.id)/messages", token: token, body: body)
            switch answer.status {
            case 200, 201: return true
            case 401: await logIn(sender)
            default: break
            }
            log.error(
                uid: uid, via: "rest",
                "status \(answer.status): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
        } catch {
            log.error(uid: uid, via: "rest", "\(error)")
        }
        return false
    }

    /// A session that ended (a restart does not end them; an expired token does).
    private func logIn(_ user: Int64) async {
        guard let index = users[user]?.index else { return }
        let (email, password) = BenchUsers.credentials(index, tag: tag)
        if let login = try? await api.call(
            .POST, "/v1/auth/login", json: ["email": email, "password": password], expected: [200], as: API.Login.self)
        {
            tokens.withLock { $0[user] = login.accessToken }
        }
    }

    /// Once a second: a read marker, a typing notice and a login, as apps send them. Their
    /// failures are expected during faults and not retried.
    private func extras(_ index: Int) async {
        let room = rooms[index % rooms.count]
        let member = room.members[index % room.members.count]
        if let seq = latestSeq.withLock({ $0[room.id] }) {
            let token = tokens.withLock { $0[member.id] }
            _ = try? await api.send(
                .POST, "/v1/rooms/\(room.id)/read", token: token, body: Data(#"{"seq":\#(seq)}"#.utf8))
        }
        let typing =
            #"{"type":"creating-message-info","data":{"chatRoomId":\#(room.id),"creating":true},"hash":"t-\#(index)"}"#
        try? await clients[member.id]?.publish(topic: Topic.chatIn(room.uid), payload: Array(typing.utf8), qos: 1)
        let (email, password) = BenchUsers.credentials(member.index, tag: tag)
        _ = try? await api.send(
            .POST, "/v1/auth/login",
            body: try? JSONSerialization.data(withJSONObject: ["email": email, "password": password]))
    }

    // MARK: Reads

    /// History and the room list, alternately, by each reader in turn; each read's status is
    /// recorded, none is retried.
    private func reads(rate: Double, until stop: @escaping @Sendable () -> Bool) async {
        await withTaskGroup(of: Void.self) { group in
            await Self.paced(rate: rate, until: stop) { index, _ in group.addTask { await self.read(index) } }
        }
    }

    /// Calls `each` with 0, 1, 2… at `rate` a second, each at its due time, until `stop` says
    /// so; `stop` is asked at least every 200 ms.
    private static func paced(
        rate: Double, until stop: () -> Bool, _ each: (Int, ContinuousClock.Instant) -> Void
    ) async {
        let clock = ContinuousClock()
        let start = clock.now
        var index = 0
        while !stop() {
            let due = start + .seconds(Double(index) / rate)
            let now = clock.now
            guard due <= now else {
                try? await Task.sleep(until: min(due, now + .milliseconds(200)), clock: clock)
                continue
            }
            each(index, now)
            index += 1
        }
    }

    private func read(_ index: Int) async {
        let reader = readers.users[(index / 2) % readers.users.count]
        let (what, path) =
            index % 2 == 0
            ? ("history", "/v1/rooms/\(readers.room)/messages?limit=20") : ("rooms", "/v1/rooms?limit=20")
        let status =
            (try? await api.send(.GET, path, token: reader.login.accessToken, body: nil))?.status ?? 0
        log.read(what, status: status)
    }

    // MARK: Deliveries

    private struct Envelope: Decodable {
        struct Payload: Decodable {
            let uid: String?
            let seq: Int64?
            let code: String?
        }
        let type: String
        let hash: String?
        let data: Payload?
    }

    private func consume(_ messages: MQTTInbox, receiver: Int64) async {
        for await message in messages {
            // Only a room topic's copy is recorded, and a rejection acted on: the notification
            // topic's copy of every message is skipped undecoded (half of what arrives).
            guard message.topic.hasPrefix(Topic.roomPrefix) || Self.mayBeRejection(message.payload),
                let envelope = try? JSONCoding.decoder.decode(Envelope.self, from: Data(message.payload)),
                let uid = envelope.data?.uid, uid.hasPrefix("c-\(tag)-")
            else { continue }
            if message.topic.hasPrefix(Topic.roomPrefix), envelope.type == "new-message-notification",
                let room = roomsByUID[String(message.topic.dropFirst(Topic.roomPrefix.count))]
            {
                log.received(
                    room: room.id, uid: uid, receiver: receiver, hash: envelope.hash ?? "", seq: envelope.data?.seq)
                seen.withLock { _ = $0[uid, default: []].insert(receiver) }
                if let seq = envelope.data?.seq { latestSeq.withLock { $0[room.id] = max($0[room.id] ?? 0, seq) } }
            } else if envelope.type == "message-rejected", envelope.data?.code == "unavailable",
                let send = mqttSends.withLock({ $0[uid] })
            {
                // "Publish it again": the server could not store it. Recorded apart: the broker had
                // acknowledged it, so only the client's retry keeps it (none should be needed
                // across a graceful broker restart).
                log.error(uid: uid, via: "mqtt-acknowledged", "message-rejected unavailable after its PUBACK")
                let task = Task { [self] in
                    await untilAcknowledged(uid: uid, room: send.room, sender: send.sender, via: "mqtt") {
                        await self.publish(uid: uid, room: send.room, sender: send.sender)
                    }
                }
                retries.withLock { $0.append(task) }
            }
        }
    }

    private static let rejectionType = Array(#""message-rejected""#.utf8)

    /// Whether a payload names the `message-rejected` type (a cheap look before decoding).
    static func mayBeRejection(_ payload: [UInt8]) -> Bool {
        let needle = rejectionType
        guard payload.count >= needle.count else { return false }
        return (0...(payload.count - needle.count)).contains { start in
            payload[start] == needle[0] && payload[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}
