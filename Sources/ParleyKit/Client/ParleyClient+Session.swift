import Foundation
import NIOCore
import NIOSSL

extension ParleyClient {
    /// Starts a session from a sign-in's answer: the room list, then the broker connection
    /// with the room topics and the notification topic, then the outbox.
    func start(_ login: Components.Schemas.Login) async throws {
        if let session { await stop(session) }
        let tokens = ParleyTokens(login: login, client: account, renewBefore: renewBefore)
        let rest = ParleyREST.throwingProblems(baseURL: baseURL, tokens: tokens, transport: transport)
        let userID = login.user.id
        let endpoint = broker ?? Self.endpoint(of: login.mqtt)
        let link = MQTTLink(endpoint: endpoint) {
            let credentials = try await tokens.mqttCredentials()
            return MQTTPacket.Connect(
                version: .v5, clientID: credentials.clientId, cleanStart: true, keepAlive: 30,
                username: credentials.username, password: ByteBuffer(string: credentials.password))
        }
        let (outbox, outboxInput) = AsyncStream.makeStream(of: ParleyOutgoingMessage.self)
        session = Session(
            userID: userID, deviceID: login.deviceId, tokens: tokens, rest: rest, link: link, outbox: outboxInput,
            tasks: [])
        do {
            try await loadRooms()
            try await link.subscribe(
                [.init(topicFilter: "messenger-notifications/\(userID)", qos: .atLeastOnce)]
                    + rooms.values.map { .init(topicFilter: "chat-room/\($0.uid)", qos: .atLeastOnce) })
        } catch {
            // A sign-in that cannot load the rooms leaves no half session behind.
            if let session { await stop(session) }
            throw error
        }
        let tasks = [
            Task { for await publication in link.deliveries { await self.received(publication) } },
            Task { for await state in link.states { await self.linkChanged(state) } },
            Task { for await outgoing in outbox { await self.deliver(outgoing) } },
        ]
        session?.tasks = tasks
        await link.start()
    }

    func stop(_ ended: Session) async {
        guard session?.userID == ended.userID else { return }
        session = nil
        ended.outbox.finish()
        await ended.link.stop()
        for task in ended.tasks { task.cancel() }
        rooms = [:]
        timelines = [:]
        roomsListedAt = nil
        for outgoing in pending.values { outgoing.settle(.abandoned) }
        pending = [:]
        publishRoomList()
    }

    /// The broker the credentials name, over TLS when they say so.
    static func endpoint(of credentials: Components.Schemas.MQTTCredentials) -> MQTTEndpoint {
        MQTTEndpoint(
            host: credentials.host, port: credentials.port,
            tls: credentials.tls ? TLSConfiguration.makeClientConfiguration() : nil)
    }

    /// Reads the whole room list; a room new to the client gets its topic subscribed and starts
    /// its timeline at its newest seq (what came before is history) or, for a room created since
    /// the list was last read (with a few seconds' margin for clocks), at its start: the user
    /// has seen none of it, however late the list came (a token renewed first, a reconnect).
    /// Returns each room's newest seq as listed.
    @discardableResult
    func loadRooms() async throws -> [Int: Int] {
        let started = Date()
        let newSince = roomsListedAt?.addingTimeInterval(-5)
        var listed: [Int: ParleyRoom] = [:]
        var created: [Int: Date] = [:]
        for room in try await listRooms() {
            listed[room.id] = ParleyRoom(room)
            created[room.id] = room.createdAt
        }
        roomsListedAt = max(roomsListedAt ?? started, started)
        let newest = listed.mapValues(\.lastSeq)
        let added = listed.values.filter { rooms[$0.id] == nil }
        for room in listed.values {
            if timelines[room.id] == nil {
                let createdSince = newSince.map { created[room.id] ?? .distantPast > $0 } ?? false
                timelines[room.id] = RoomTimeline(told: createdSince ? 0 : room.lastSeq)
            }
            // What the client saw beyond the list's answer stays (the list may be older).
            if let known = rooms[room.id], known.lastSeq > room.lastSeq { listed[room.id] = known }
        }
        let removed = rooms.values.filter { listed[$0.id] == nil }
        rooms = listed
        publishRoomList()
        guard let link = session?.link else { return newest }
        if !added.isEmpty {
            _ = try? await link.subscribe(added.map { .init(topicFilter: "chat-room/\($0.uid)", qos: .atLeastOnce) })
        }
        if !removed.isEmpty {
            try? await link.unsubscribe(removed.map { "chat-room/\($0.uid)" })
        }
        return newest
    }

    private func linkChanged(_ state: MQTTLink.State) async {
        switch state {
        case .connected:
            let since = disconnectedAt
            disconnectedAt = nil
            await catchUp(changedSince: since)
        case .waiting, .stopped:
            if disconnectedAt == nil { disconnectedAt = Date() }
        case .connecting:
            break
        }
    }

    /// Once the subscriptions are in place (each connection): the room list afresh, the
    /// messages of every room that has more than it told, and after a lost connection the
    /// edits, deletions and reactions since (with a margin for clocks) of the rooms the light
    /// sync names: a change moves its room's `updated_at`, so one request finds the few rooms
    /// to ask rather than one request per room.
    private func catchUp(changedSince since: Date?) async {
        guard let newest = try? await loadRooms() else { return }
        for (roomID, seq) in newest where seq > timelines[roomID]?.told ?? seq {
            await repair(roomID)
        }
        guard let since = since?.addingTimeInterval(-5) else { return }
        let changed = (try? await roomsChanged(since: since)) ?? Array(rooms.keys)
        for roomID in changed where rooms[roomID] != nil { await fetchChanges(in: roomID, since: since) }
    }

    /// The rooms with anything new since `since`: messages, edits, deletions, reactions, the
    /// room itself (the room list's light sync).
    func roomsChanged(since: Date) async throws -> [Int] {
        try await listRooms(since: since).map(\.id)
    }

    /// Every page of `GET /v1/rooms` (with `since`: the light sync's rooms only).
    private func listRooms(since: Date? = nil) async throws -> [Components.Schemas.Room] {
        let rest = try signedIn().rest
        var cursor: String?
        var listed: [Components.Schemas.Room] = []
        repeat {
            let page = try await rest.getV1Rooms(query: .init(limit: 100, cursor: cursor, since: since)).ok.body.json
            listed += page.rooms
            cursor = page.nextCursor
        } while cursor != nil
        return listed
    }
}
