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
        var out: [UInt8] = []
        out.reserveCapacity(320 + message.content.utf8.count)
        // The encoder's sorted keys (`.sortedKeys`), in the same order.
        out += #"{"data":{"chatRoomId":"#.utf8
        out += String(message.chatRoomId).utf8
        out += #","chatRoomUid":"#.utf8
        string(message.chatRoomUid, into: &out)
        out += #","content":"#.utf8
        string(message.content, into: &out)
        out += #","createdAt":"#.utf8
        date(message.createdAt, into: &out)
        out += #","deletedAt":"#.utf8
        date(message.deletedAt, into: &out)
        out += #","deletedById":"#.utf8
        out += (message.deletedById.map(String.init) ?? "null").utf8
        out += #","editedAt":"#.utf8
        date(message.editedAt, into: &out)
        out += #","id":"#.utf8
        out += String(message.id).utf8
        out += #","mentions":["#.utf8
        out += message.mentions.map(String.init).joined(separator: ",").utf8
        out += #"],"reactions":[],"replyCount":"#.utf8
        out += String(message.replyCount).utf8
        out += #","replyTo":null,"sentById":"#.utf8
        out += (message.sentById.map(String.init) ?? "null").utf8
        out += #","seq":"#.utf8
        out += String(message.seq).utf8
        out += #","uid":"#.utf8
        string(message.uid, into: &out)
        out += #"},"hash":"#.utf8
        string(envelope.hash, into: &out)
        out += #","type":"#.utf8
        string(envelope.type, into: &out)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    private static func date(_ date: Date?, into out: inout [UInt8]) {
        if let date {
            string(JSONCoding.timestamp(date), into: &out)
        } else {
            out += "null".utf8
        }
    }

    /// A JSON string as the encoder escapes it (`.withoutEscapingSlashes`): quotes,
    /// backslashes and control characters; every other byte as it is. Each escaped character
    /// is ASCII, and no byte of a multi-byte UTF-8 sequence is, so bytes can be escaped alone.
    static func string(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case UInt8(ascii: "\n"): out += #"\n"#.utf8
            case UInt8(ascii: "\r"): out += #"\r"#.utf8
            case UInt8(ascii: "\t"): out += #"\t"#.utf8
            case 0x08: out += #"\b"#.utf8
            case 0x0C: out += #"\f"#.utf8
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
