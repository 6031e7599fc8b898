/// Reads a message as every stock client sends it, straight from its bytes: the `chat-in`
/// payload `{type, data, hash}` and the REST body of `POST /v1/rooms/{id}/messages`, their
/// fields those of ``ClientEnvelope/Data`` and ``NewMessage`` as strings, integers, booleans,
/// arrays of integers or null. Foundation's `JSONDecoder` took 6 % of the worker's CPU at
/// 1,000 messages/s (<doc:ReadingStockMessages>).
///
/// It answers only what `JSONDecoder` would answer alike, and gives up (nil) on anything else:
/// another key, metadata, a number that is not a plain integer, a value of another kind, an
/// escape of a lone surrogate, text that is not UTF-8, bytes after the object. The decoder then
/// reads the payload and names whatever is wrong with it, so every refusal stays the decoder's.
/// Run after ``StrictJSON/check(_:)``, which refuses keys given twice, NUL and deep nesting.
struct PlainMessageReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    /// Not a payload this reader answers; the decoder reads it.
    private struct Unsupported: Error {}

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The envelope of a `chat-in` payload, or nil when the decoder must read it.
    static func envelope(_ payload: [UInt8]) -> ClientEnvelope? {
        read(payload) { try $0.envelope() }
    }

    /// The message of a REST body, or its refusal (as ``NewMessage``'s `Decodable` conformance
    /// refuses it); nil when the decoder must read it.
    static func message(_ body: [UInt8]) -> Result<NewMessage, any Error>? {
        read(body) { try $0.dataFields().message(fieldPrefix: "") }
    }

    private static func read<Value>(_ bytes: [UInt8], _ value: (inout PlainMessageReader) throws -> Value) -> Value? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = PlainMessageReader(bytes: buffer)
            guard let read = try? value(&reader) else { return nil }
            reader.skipWhitespace()
            return reader.index == buffer.count ? read : nil
        }
    }

    private mutating func envelope() throws -> ClientEnvelope {
        var type: String?
        var data: DataFields?
        var hash: String?
        var seen = Set<String>()
        try object { key, reader in
            guard seen.insert(key).inserted else { throw Unsupported() }
            switch key {
            case "type": type = try reader.string()
            case "data": data = try reader.dataFields()
            case "hash": hash = try reader.nullable { try $0.string() }
            default: throw Unsupported()
            }
        }
        guard let type, let data else { throw Unsupported() }
        return ClientEnvelope(
            type: type, data: data.notice, hash: hash,
            message: type == ClientEnvelope.newMessageType ? data.message(fieldPrefix: "data.") : nil)
    }

    /// The fields `data` (or a REST body) may hold: a message's, and the notices' beside them
    /// (which a message ignores, as the decoder ignores keys it does not know).
    private struct DataFields {
        var chatRoomId: Int64?
        var uid: String?
        var messageId: Int64?
        var seq: Int64?
        var creating: Bool?
        var time: String?
        var content: String?
        var type: String?
        var fileId: Int64?
        var replyToId: Int64?
        var mentions: [Int64]?
        var attachments: [Int64]?

        var notice: ClientEnvelope.Data {
            ClientEnvelope.Data(
                chatRoomId: chatRoomId, uid: uid, messageId: messageId, seq: seq, creating: creating, time: time)
        }

        /// The message as ``NewMessage/init(from:)`` builds it: its checks, its errors, its
        /// fields named by their path (`fieldPrefix`). Its metadata is null (or absent).
        func message(fieldPrefix: String) -> Result<NewMessage, any Error> {
            Result {
                try NewMessage.submitted(
                    content: content, uid: uid, fileId: fileId, replyToId: replyToId, mentions: mentions, type: type,
                    metadata: { nil }, attachments: { attachments }, fieldPrefix: fieldPrefix)
            }
        }
    }

    private mutating func dataFields() throws -> DataFields {
        var fields = DataFields()
        var seen = Set<String>()
        try object { key, reader in
            guard seen.insert(key).inserted else { throw Unsupported() }
            switch key {
            case "chatRoomId": fields.chatRoomId = try reader.nullable { try $0.integer() }
            case "uid": fields.uid = try reader.nullable { try $0.string() }
            case "messageId": fields.messageId = try reader.nullable { try $0.integer() }
            case "seq": fields.seq = try reader.nullable { try $0.integer() }
            case "creating": fields.creating = try reader.nullable { try $0.boolean() }
            case "time": fields.time = try reader.nullable { try $0.string() }
            case "content": fields.content = try reader.nullable { try $0.string() }
            case "type": fields.type = try reader.nullable { try $0.string() }
            case "fileId": fields.fileId = try reader.nullable { try $0.integer() }
            case "replyToId": fields.replyToId = try reader.nullable { try $0.integer() }
            case "mentions": fields.mentions = try reader.nullable { try $0.integers() }
            case "attachments": fields.attachments = try reader.nullable { try $0.integers() }
            case "metadata": try reader.literal("null")  // metadata itself is the decoder's
            default: throw Unsupported()
            }
        }
        return fields
    }

    // MARK: JSON

    /// `{`, then each member's key handed to `member` with the reader at its value, then `}`.
    private mutating func object(_ member: (String, inout PlainMessageReader) throws -> Void) throws {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            let key = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try member(key, &self)
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw Unsupported()
            }
        }
    }

    /// nil for `null`, otherwise what `value` reads.
    private mutating func nullable<Value>(_ value: (inout PlainMessageReader) throws -> Value) throws -> Value? {
        if peek() == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        return try value(&self)
    }

    private mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // Most strings hold no escape: their bytes are the text.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try text(UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)]))
            }
            guard byte != UInt8(ascii: "\\") else { break }
            guard byte >= 0x20 else { throw Unsupported() }
            index += 1
        }
        var unescaped = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return try unescaped.withUnsafeBufferPointer { try text($0) }
            case UInt8(ascii: "\\"): try escape(into: &unescaped)
            case 0..<0x20: throw Unsupported()
            default: unescaped.append(byte)
            }
        }
        throw Unsupported()
    }

    private func text(_ utf8: UnsafeBufferPointer<UInt8>) throws -> String {
        guard let text = String(validating: utf8, as: UTF8.self) else { throw Unsupported() }
        return text
    }

    /// The character after a backslash, as UTF-8; a surrogate only as half of a pair.
    private mutating func escape(into utf8: inout [UInt8]) throws {
        let simple: UInt8? =
            switch next() {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case UInt8(ascii: "/"): UInt8(ascii: "/")
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            case UInt8(ascii: "u"): nil
            default: throw Unsupported()
            }
        if let simple {
            utf8.append(simple)
            return
        }
        var value = try hexQuad()
        if (0xD800..<0xDC00).contains(value) {
            try literal("\\u")
            let low = try hexQuad()
            guard (0xDC00..<0xE000).contains(low) else { throw Unsupported() }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(value) else { throw Unsupported() }
        utf8.append(contentsOf: UTF8.encode(scalar)!)
    }

    private mutating func hexQuad() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit: UInt32 =
                switch next() {
                case let byte? where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
                    UInt32(byte - UInt8(ascii: "0"))
                case let byte? where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte):
                    UInt32(byte - UInt8(ascii: "a") + 10)
                case let byte? where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte):
                    UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw Unsupported()
                }
            value = value << 4 | digit
        }
        return value
    }

    /// An integer as JSON writes one (`-?(0|[1-9][0-9]*)`) that fits 64 bits; a fraction or
    /// an exponent is the decoder's to judge.
    private mutating func integer() throws -> Int64 {
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var magnitude: UInt64 = 0
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, overflowPlus) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowPlus else { throw Unsupported() }
            magnitude = plus
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { throw Unsupported() }
        if let byte = peek(), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            throw Unsupported()
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw Unsupported() }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw Unsupported() }
        return Int64(magnitude)
    }

    private mutating func integers() throws -> [Int64] {
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        var values: [Int64] = []
        if peek() == UInt8(ascii: "]") {
            index += 1
            return values
        }
        while true {
            skipWhitespace()
            values.append(try integer())
            skipWhitespace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return values
            default: throw Unsupported()
            }
        }
    }

    private mutating func boolean() throws -> Bool {
        if peek() == UInt8(ascii: "t") {
            try literal("true")
            return true
        }
        try literal("false")
        return false
    }

    private mutating func literal(_ word: StaticString) throws {
        let utf8 = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes.count - index >= utf8.count, utf8.elementsEqual(bytes[index..<(index + utf8.count)]) else {
            throw Unsupported()
        }
        index += utf8.count
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard next() == byte else { throw Unsupported() }
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func next() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            index += 1
        }
    }
}
