import Foundation
import ParleyCore

/// An answer that writes its own JSON (``JSONResponse`` asks it first).
protocol HandWrittenJSON {
    func writeJSON(userInfo: [CodingUserInfoKey: any Sendable]) throws -> [UInt8]
}

/// The room list by hand: Codable's dispatch was most of what encoding a list still cost
/// (<doc:RequestCost>). The keys are in sorted order, the bytes Foundation's; the tests compare
/// them with Foundation's for every field set and unset.
extension RoomsResponse: HandWrittenJSON {
    func writeJSON(userInfo: [CodingUserInfoKey: any Sendable]) throws -> [UInt8] {
        var json = JSONHandWriter(userInfo: userInfo)
        json.beginObject()
        json.key("nextCursor")
        json.string(nextCursor)
        json.key("rooms")
        json.beginArray()
        for room in rooms { try room.write(to: &json) }
        json.endArray()
        json.endObject()
        return json.bytes
    }
}

extension RoomResponse: HandWrittenJSON {
    func writeJSON(userInfo: [CodingUserInfoKey: any Sendable]) throws -> [UInt8] {
        var json = JSONHandWriter(userInfo: userInfo)
        try write(to: &json)
        return json.bytes
    }

    /// Every field as its `Codable` conformance has it: `peer` and `latestMessages` only when
    /// present, the `@NullEncoded` ones as `null`.
    func write(to json: inout JSONHandWriter) throws {
        json.beginObject()
        json.key("archived")
        json.bool(archived)
        json.key("avatar")
        try json.value(avatar)
        json.key("createdAt")
        json.date(createdAt)
        json.key("description")
        json.string(description)
        json.key("id")
        json.integer(id)
        json.key("lastMessageAt")
        json.date(lastMessageAt)
        json.key("lastReadMessageId")
        json.integer(lastReadMessageId)
        json.key("lastReadSeq")
        json.integer(lastReadSeq)
        json.key("lastSeq")
        json.integer(lastSeq)
        if let latestMessages {
            json.key("latestMessages")
            try json.value(latestMessages)
        }
        json.key("myRole")
        json.string(myRole.rawValue)
        json.key("name")
        json.string(name)
        if let peer {
            json.key("peer")
            try peer.write(to: &json)
        }
        json.key("topic")
        json.string(topic)
        json.key("type")
        json.string(type.rawValue)
        json.key("uid")
        json.string(uid)
        json.key("unreadCount")
        json.integer(unreadCount)
        json.key("unreadMentionCount")
        json.integer(unreadMentionCount)
        json.endObject()
    }
}

/// A room's peer by hand, as the room list writes one per room; `email` only when shown.
extension UserResponse {
    func write(to json: inout JSONHandWriter) throws {
        json.beginObject()
        json.key("avatar")
        try json.value(avatar)
        json.key("createdAt")
        json.date(createdAt)
        if let email {
            json.key("email")
            json.string(email)
        }
        json.key("firstName")
        json.string(firstName)
        json.key("id")
        json.integer(id)
        json.key("lastName")
        json.string(lastName)
        json.endObject()
    }
}
