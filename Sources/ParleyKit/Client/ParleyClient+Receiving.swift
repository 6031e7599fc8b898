import Foundation
import NIOCore

extension ParleyClient {
    /// A publication from the broker: a room event or a notice for the user.
    func received(_ publication: MQTTPacket.Publish) async {
        let payload = Array(publication.payload.readableBytesView)
        guard session != nil, let (event, hash) = try? ServerEvent.read(payload) else { return }
        switch event {
        case .event(.new(let message)):
            await take(message)
        case .event(.rejected(let rejection)):
            await rejected(rejection)
        case .event(let event):
            // Other events have no order to keep: a repeated delivery is dropped by its hash.
            // Without a hash, the topic and the payload itself.
            guard recentHashes.insert(hash ?? publication.topic + String(decoding: payload, as: UTF8.self)) else {
                return
            }
            apply(event)
            events.send(event)
            if case .roomChanged = event { _ = try? await loadRooms() }
        case .summary(let roomID, let seq, let unread, let unreadMentions):
            guard var room = rooms[roomID] else { return }
            room.lastSeq = max(room.lastSeq, seq)
            room.unreadCount = unread
            room.unreadMentionCount = unreadMentions
            rooms[roomID] = room
            publishRoomList()
            if seq > timelines[roomID]?.told ?? seq { await repair(roomID) }
        case .cleared(let roomID, let readSeq):
            guard var room = rooms[roomID] else { return }
            room.unreadCount = min(room.unreadCount, max(0, room.lastSeq - readSeq))
            if room.unreadCount == 0 { room.unreadMentionCount = 0 }
            rooms[roomID] = room
            publishRoomList()
        case .other:
            break
        }
    }

    /// A new message, from whichever topic or the history: told once, in seq order; a gap
    /// before it is filled from the history first.
    func take(_ message: ParleyMessage) async {
        guard rooms[message.roomID] != nil, var timeline = timelines[message.roomID] else {
            // A room the client does not know yet (just created, just joined).
            _ = try? await loadRooms()
            guard timelines[message.roomID] != nil else { return }
            return await take(message)
        }
        let ready = timeline.take(message)
        timelines[message.roomID] = timeline
        tell(ready)
        if timeline.hasGap { await repair(message.roomID) }
    }

    /// Tells new messages in order: to the room list, to pending sends, to the streams.
    private func tell(_ messages: [ParleyMessage]) {
        guard let me = session?.userID, !messages.isEmpty else { return }
        for message in messages {
            rooms[message.roomID]?.count(message, me: me)
            if message.senderID == me, let outgoing = pending.removeValue(forKey: message.uid) {
                outgoing.settle(.stored(message))
            }
            events.send(.new(message))
        }
        publishRoomList()
    }

    /// Fills the room's gap from the history (`after=seq`), as many rounds as messages keep
    /// arriving beyond it meanwhile; one repair per room at a time.
    func repair(_ roomID: Int) async {
        guard let rest = session?.rest, repairing.insert(roomID).inserted else { return }
        defer { repairing.remove(roomID) }
        for _ in 0..<5 {
            guard let timeline = timelines[roomID] else { return }
            let mark = timeline.newestHeld ?? 0
            var history: [ParleyMessage] = []
            var after = timeline.told
            do {
                while true {
                    let page = try await rest.getV1RoomsIdMessages(
                        path: .init(id: roomID), query: .init(after: after, limit: 200)
                    ).ok.body.json
                    history += page.messages.map(ParleyMessage.init)
                    guard page.hasMore, let last = page.messages.last else { break }
                    after = last.seq
                }
            } catch {
                return  // the next message or reconnect tries again
            }
            guard var current = timelines[roomID] else { return }
            let ready = current.fill(with: history, through: max(mark, history.last?.seq ?? 0))
            timelines[roomID] = current
            tell(ready)
            guard current.hasGap else { return }
        }
    }

    /// Edits, deletions and reactions in the room since `since` (`changedSince`), told as
    /// edits (a deleted message as its deletion).
    func fetchChanges(in roomID: Int, since: Date) async {
        guard let rest = session?.rest else { return }
        var cursor: String?
        repeat {
            guard
                let page = try? await rest.getV1RoomsIdMessages(
                    path: .init(id: roomID), query: .init(cursor: cursor, changedSince: since, limit: 200)
                ).ok.body.json
            else { return }
            for message in page.messages.map(ParleyMessage.init) where message.seq <= timelines[roomID]?.told ?? 0 {
                let event: ParleyEvent =
                    if let deletedAt = message.deletedAt {
                        .deleted(messageID: message.id, seq: message.seq, roomID: roomID, at: deletedAt)
                    } else {
                        .edited(message)
                    }
                events.send(event)
            }
            cursor = page.nextCursor
        } while cursor != nil
    }

    /// What an event changes in the room list.
    private func apply(_ event: ParleyEvent) {
        switch event {
        case .edited(let message) where rooms[message.roomID]?.lastMessage?.id == message.id:
            rooms[message.roomID]?.lastMessage = message
            publishRoomList()
        case .read(let roomID, let userID, let seq) where userID == session?.userID:
            guard var room = rooms[roomID] else { return }
            room.unreadCount = min(room.unreadCount, max(0, room.lastSeq - seq))
            rooms[roomID] = room
            publishRoomList()
        default:
            break
        }
    }
}
