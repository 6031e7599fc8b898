import Foundation

/// A plain message's `new-message-notification`, written by hand: byte for byte what
/// ``JSONCoding/encoder`` writes for ``RoomEvent/newMessage(_:)`` (sorted keys, slashes
/// unescaped), at a fraction of its cost. The worker encodes one per message stored, and
/// Foundation's encoder was a tenth of its CPU at 1,750 messages a second (see
/// <doc:MessagePipelinePerformance>). Any other message (a file, attachments, metadata, a reply,
/// reactions) is left to the encoder. Its strings are escaped by ``JSONBytesEncoder``'s one rule
/// (`JSONScalar`), written as bytes: appending a text's scalars to a `String` one by one had
/// been 4 % of the worker's CPU.
enum PlainMessageEventJSON {
    /// The event's JSON, or nil when `message` is not plain.
    static func encode(_ envelope: Envelope<Message>) -> String? {
        let message = envelope.data
        guard message.file == nil, message.attachments.isEmpty, message.metadata == nil, message.replyTo == nil,
            message.reactions.isEmpty
        else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(320 + message.content.utf8.count)
        out += "{\"data\":{\"attachments\":[],\"chatRoomId\":".utf8
        out += String(message.chatRoomId).utf8
        out += ",\"chatRoomUid\":".utf8
        JSONScalar.writeString(message.chatRoomUid, to: &out)
        out += ",\"content\":".utf8
        JSONScalar.writeString(message.content, to: &out)
        out += ",\"createdAt\":".utf8
        JSONCoding.appendTimestamp(message.createdAt, to: &out)
        out += ",\"deletedAt\":".utf8
        date(message.deletedAt, into: &out)
        out += ",\"deletedById\":".utf8
        integer(message.deletedById, into: &out)
        out += ",\"editedAt\":".utf8
        date(message.editedAt, into: &out)
        out += ",\"id\":".utf8
        out += String(message.id).utf8
        out += ",\"mentions\":[".utf8
        out += message.mentions.map { String($0) }.joined(separator: ",").utf8
        out += "],\"metadata\":null,\"reactions\":[],\"receipts\":".utf8
        if let receipts = message.receipts {
            out += "{\"delivered\":\(receipts.delivered),\"read\":\(receipts.read)}".utf8
        } else {
            out += "null".utf8
        }
        out += ",\"replyCount\":".utf8
        out += String(message.replyCount).utf8
        out += ",\"replyTo\":null,\"sentById\":".utf8
        integer(message.sentById, into: &out)
        out += ",\"seq\":".utf8
        out += String(message.seq).utf8
        out += ",\"type\":".utf8
        JSONScalar.writeString(message.type.rawValue, to: &out)
        out += ",\"uid\":".utf8
        JSONScalar.writeString(message.uid, to: &out)
        out += "},\"hash\":".utf8
        JSONScalar.writeString(envelope.hash, to: &out)
        out += ",\"type\":".utf8
        JSONScalar.writeString(envelope.type, to: &out)
        out += "}".utf8
        return String(decoding: out, as: UTF8.self)
    }

    private static func date(_ date: Date?, into out: inout [UInt8]) {
        if let date { JSONCoding.appendTimestamp(date, to: &out) } else { out += "null".utf8 }
    }

    private static func integer(_ value: Int64?, into out: inout [UInt8]) {
        out += (value.map { String($0) } ?? "null").utf8
    }
}

extension Envelope where Payload == Message {
    /// A message's event: by hand when it is plain (``PlainMessageEventJSON``), else by the
    /// encoder.
    public func json() -> String {
        PlainMessageEventJSON.encode(self)
            ?? String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
