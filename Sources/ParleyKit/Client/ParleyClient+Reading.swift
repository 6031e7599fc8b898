import Foundation
import NIOCore

extension ParleyClient {
    /// Moves the user's read marker in the room up to `seq` (it never moves back): the room's
    /// unread counts follow at once, the other members hear a `read` (unless the user shares
    /// no read receipts), and the user's other devices withdraw what they show of the room.
    public func markRead(_ roomID: Int, upTo seq: Int) async throws {
        let rest = try signedIn().rest
        let marker = try await rest.postV1RoomsIdRead(path: .init(id: roomID), body: .json(.case2(.init(seq: seq))))
            .ok.body.json
        guard var room = rooms[roomID] else { return }
        room.unreadCount = min(room.unreadCount, max(0, room.lastSeq - marker.seq))
        if room.unreadCount == 0 { room.unreadMentionCount = 0 }
        rooms[roomID] = room
        publishRoomList()
    }

    /// Tells the room's members that the user is typing (or stopped), on `chat-in`; nothing is
    /// stored. The server relays at most 10 a user in 10 s, and none for a user who shares no
    /// typing. Without a broker connection nothing is sent: it would be stale on arrival.
    public func setTyping(_ typing: Bool, in roomID: Int) async throws {
        let session = try signedIn()
        guard let room = rooms[roomID] else { throw ParleyClientError.unknownRoom(roomID) }
        let notice = TypingInput(
            type: "creating-message-info",
            data: .init(chatRoomId: roomID, creating: typing, time: Date().formatted(.iso8601)),
            hash: UUID().uuidString)
        let payload = try ContractJSON.encoder.encode(notice)
        _ = try await session.link.publish(
            MQTTPacket.Publish(topic: "chat-in/\(room.uid)", payload: ByteBuffer(bytes: payload), qos: .atLeastOnce))
    }
}

/// A `creating-message-info` for `chat-in`.
private struct TypingInput: Encodable {
    struct Body: Encodable {
        let chatRoomId: Int
        let creating: Bool
        let time: String
    }

    let type: String
    let data: Body
    let hash: String
}
