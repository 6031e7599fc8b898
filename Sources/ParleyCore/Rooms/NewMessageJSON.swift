import Foundation

/// The `new-message-notification` of a plain message (no file, reply or reactions: what the
/// relay publishes for nearly every message), written directly, byte for byte what
/// ``Envelope/json()`` writes: Foundation's `JSONEncoder` took 9 % of `parley worker`'s CPU
/// in chat-2. Any other message goes through the encoder.
enum NewMessageJSON {
    /// The envelope's JSON; nil when the message is not plain.
    static func encode(_ envelope: Envelope<Message>) -> String? {
        let message = envelope.data
        guard message.file == nil, message.replyTo == nil, message.reactions.isEmpty else { return nil }
        // The encoder's sorted keys (`.sortedKeys`), in the same order.
        var out = #"{"data":{"chatRoomId":"#
        out.reserveCapacity(320 + message.content.utf8.count)
        out += String(message.chatRoomId)
        out += #","chatRoomUid":"#
        string(message.chatRoomUid, into: &out)
        out += #","content":"#
        string(message.content, into: &out)
        out += #","createdAt":"#
        date(message.createdAt, into: &out)
        out += #","deletedAt":"#
        date(message.deletedAt, into: &out)
        out += #","deletedById":"#
        out += message.deletedById.map(String.init) ?? "null"
        out += #","editedAt":"#
        date(message.editedAt, into: &out)
        out += #","id":"#
        out += String(message.id)
        out += #","mentions":["#
        out += message.mentions.map(String.init).joined(separator: ",")
        out += #"],"reactions":[],"replyCount":"#
        out += String(message.replyCount)
        out += #","replyTo":null,"sentById":"#
        out += message.sentById.map(String.init) ?? "null"
        out += #","seq":"#
        out += String(message.seq)
        out += #","uid":"#
        string(message.uid, into: &out)
        out += #"},"hash":"#
        string(envelope.hash, into: &out)
        out += #","type":"#
        string(envelope.type, into: &out)
        out += "}"
        return out
    }

    private static func date(_ date: Date?, into out: inout String) {
        if let date {
            string(JSONCoding.timestamp(date), into: &out)
        } else {
            out += "null"
        }
    }

    /// A JSON string as the encoder escapes it (`.withoutEscapingSlashes`): quotes,
    /// backslashes and control characters; everything else as it is, in UTF-8.
    static func string(_ text: String, into out: inout String) {
        out += "\""
        var plainFrom = text.unicodeScalars.startIndex
        for index in text.unicodeScalars.indices {
            let scalar = text.unicodeScalars[index]
            guard scalar.value < 0x20 || scalar == "\"" || scalar == "\\" else { continue }
            out.unicodeScalars.append(contentsOf: text.unicodeScalars[plainFrom..<index])
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
            plainFrom = text.unicodeScalars.index(after: index)
        }
        out.unicodeScalars.append(contentsOf: text.unicodeScalars[plainFrom...])
        out += "\""
    }
}
