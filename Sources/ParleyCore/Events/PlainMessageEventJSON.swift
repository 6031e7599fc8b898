import Foundation

/// A plain message's `new-message-notification`, written by hand: byte for byte what
/// ``JSONCoding/encoder`` writes for ``RoomEvent/newMessage(_:)`` (sorted keys, slashes
/// unescaped), at a fraction of its cost. The worker encodes one per message stored, and
/// Foundation's encoder was a tenth of its CPU at 1,750 messages a second (see
/// <doc:MessagePipelinePerformance>). Any other message (a file, attachments, metadata, a reply,
/// reactions) is left to the encoder.
enum PlainMessageEventJSON {
    /// The event's JSON, or nil when `message` is not plain.
    static func encode(_ envelope: Envelope<Message>) -> String? {
        let message = envelope.data
        guard message.file == nil, message.attachments.isEmpty, message.metadata == nil, message.replyTo == nil,
            message.reactions.isEmpty
        else { return nil }
        var out = "{\"data\":{\"attachments\":[],\"chatRoomId\":"
        out.reserveCapacity(320 + message.content.utf8.count)
        out += String(message.chatRoomId)
        out += ",\"chatRoomUid\":"
        string(message.chatRoomUid, into: &out)
        out += ",\"content\":"
        string(message.content, into: &out)
        out += ",\"createdAt\":"
        string(JSONCoding.timestamp(message.createdAt), into: &out)
        out += ",\"deletedAt\":"
        optional(message.deletedAt.map(JSONCoding.timestamp), into: &out)
        out += ",\"deletedById\":"
        out += message.deletedById.map { String($0) } ?? "null"
        out += ",\"editedAt\":"
        optional(message.editedAt.map(JSONCoding.timestamp), into: &out)
        out += ",\"id\":"
        out += String(message.id)
        out += ",\"mentions\":["
        out += message.mentions.map { String($0) }.joined(separator: ",")
        out += "],\"metadata\":null,\"reactions\":[],\"receipts\":"
        if let receipts = message.receipts {
            out += "{\"delivered\":\(receipts.delivered),\"read\":\(receipts.read)}"
        } else {
            out += "null"
        }
        out += ",\"replyCount\":"
        out += String(message.replyCount)
        out += ",\"replyTo\":null,\"sentById\":"
        out += message.sentById.map { String($0) } ?? "null"
        out += ",\"seq\":"
        out += String(message.seq)
        out += ",\"type\":"
        string(message.type.rawValue, into: &out)
        out += ",\"uid\":"
        string(message.uid, into: &out)
        out += "},\"hash\":"
        string(envelope.hash, into: &out)
        out += ",\"type\":"
        string(envelope.type, into: &out)
        out += "}"
        return out
    }

    private static func optional(_ text: String?, into out: inout String) {
        if let text { string(text, into: &out) } else { out += "null" }
    }

    /// A JSON string as Foundation's encoder writes it: `"` and `\` escaped, the control
    /// characters as `\b \t \n \f \r` or `\u00XX`, everything else (slashes too) as it is.
    static func string(_ text: String, into out: inout String) {
        out += "\""
        var plainFrom = text.unicodeScalars.startIndex
        var index = plainFrom
        let scalars = text.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let escape: String? =
                switch scalar.value {
                case 0x22: "\\\""
                case 0x5C: "\\\\"
                case 0x08: "\\b"
                case 0x09: "\\t"
                case 0x0A: "\\n"
                case 0x0C: "\\f"
                case 0x0D: "\\r"
                case 0..<0x20: "\\u00" + hex(scalar.value >> 4) + hex(scalar.value & 0xF)
                default: nil
                }
            if let escape {
                out.unicodeScalars.append(contentsOf: scalars[plainFrom..<index])
                out += escape
                plainFrom = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        out.unicodeScalars.append(contentsOf: scalars[plainFrom..<scalars.endIndex])
        out += "\""
    }

    private static func hex(_ value: UInt32) -> String {
        String(UnicodeScalar(UInt8(value < 10 ? 0x30 + value : 0x61 + value - 10)))
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
