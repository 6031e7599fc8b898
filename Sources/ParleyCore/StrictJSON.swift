/// What JSON a client may send beyond what `JSONDecoder` checks, the same for REST bodies and
/// MQTT payloads: no key twice in one object (Foundation keeps the first value where
/// JavaScript and Python keep the last, so one body would mean two things), no NUL in any
/// string (PostgreSQL cannot store it), and at most `maximumDepth` levels of nesting.
///
/// A single pass over the bytes; it stops at the first problem it sees and leaves every
/// other malformation (a missing quote, a trailing comma) to the decoder's own error.
public enum StrictJSON {
    public static let maximumDepth = 32

    /// Throws a `ParleyError` (`invalid-request`) naming the field at fault.
    public static func check(_ bytes: some Collection<UInt8>) throws {
        let scan = { (buffer: UnsafeBufferPointer<UInt8>) throws in
            var scanner = Scanner(bytes: buffer)
            try scanner.value()
        }
        if try bytes.withContiguousStorageIfAvailable(scan) == nil {
            try Array(bytes).withUnsafeBufferPointer(scan)
        }
    }

    /// Builds text only for keys, the one thing it compares; every other string is only read
    /// through. The path to the current value is one stack, named only in an error.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// The keys and array positions leading to the value being read.
        var path: [String] = []

        /// Syntax errors end the scan quietly: the decoder reports them.
        private struct Malformed: Error {}

        mutating func value() throws {
            do {
                try parseValue(depth: 0)
            } catch let error as ParleyError {
                throw error
            } catch {
                return
            }
        }

        private mutating func parseValue(depth: Int) throws {
            skipWhitespace()
            guard index < bytes.count else { throw Malformed() }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                try nested(depth)
                index += 1
                var keys = Set<String>()
                skipWhitespace()
                if peek(UInt8(ascii: "}")) { return }
                repeat {
                    skipWhitespace()
                    let key = String(decoding: try string(collecting: true), as: UTF8.self)
                    guard keys.insert(key).inserted else {
                        throw ParleyError.invalidRequest(
                            "\(name(path + [key])) appears twice in one object", field: name(path + [key]))
                    }
                    skipWhitespace()
                    guard peek(UInt8(ascii: ":")) else { throw Malformed() }
                    path.append(key)
                    try parseValue(depth: depth + 1)
                    path.removeLast()
                    skipWhitespace()
                } while peek(UInt8(ascii: ","))
                guard peek(UInt8(ascii: "}")) else { throw Malformed() }
            case UInt8(ascii: "["):
                try nested(depth)
                index += 1
                skipWhitespace()
                if peek(UInt8(ascii: "]")) { return }
                var position = 0
                repeat {
                    path.append(String(position))
                    try parseValue(depth: depth + 1)
                    path.removeLast()
                    position += 1
                    skipWhitespace()
                } while peek(UInt8(ascii: ","))
                guard peek(UInt8(ascii: "]")) else { throw Malformed() }
            case UInt8(ascii: "\""):
                _ = try string(collecting: false)
            default:
                // A number, true, false or null: nothing to check but where it ends.
                while index < bytes.count, !Self.isDelimiter(bytes[index]) { index += 1 }
            }
        }

        private static func isDelimiter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"): true
            default: isWhitespace(byte)
            }
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        private func nested(_ depth: Int) throws(ParleyError) {
            guard depth < StrictJSON.maximumDepth else {
                throw ParleyError.invalidRequest(
                    "The JSON is nested deeper than \(StrictJSON.maximumDepth) levels.",
                    field: path.isEmpty ? nil : name(path))
            }
        }

        /// A string at `index` (its opening quote), unescaped when `collecting` (keys are
        /// compared as the decoder will see them: `"a"` and `"\u0061"` are one key), and
        /// otherwise only checked; the bytes are empty then.
        private mutating func string(collecting: Bool) throws -> [UInt8] {
            guard peek(UInt8(ascii: "\"")) else { throw Malformed() }
            var text: [UInt8] = []
            var pendingHigh: UInt16?
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") { return text }
                guard byte == UInt8(ascii: "\\") else {
                    if collecting { text.append(byte) }
                    continue
                }
                guard index < bytes.count else { throw Malformed() }
                let escape = bytes[index]
                index += 1
                guard escape == UInt8(ascii: "u") else {
                    if collecting { text.append(Self.simpleEscapes[escape] ?? escape) }
                    continue
                }
                guard index + 4 <= bytes.count,
                    let unit = UInt16(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                else { throw Malformed() }
                index += 4
                if unit == 0 {
                    throw ParleyError.invalidRequest(
                        "\(path.isEmpty ? "The body" : name(path)) must not contain NUL characters",
                        field: path.isEmpty ? nil : name(path))
                }
                guard collecting else { continue }
                if UTF16.isLeadSurrogate(unit) {
                    pendingHigh = unit
                    continue
                }
                let scalar: Unicode.Scalar?
                if UTF16.isTrailSurrogate(unit), let high = pendingHigh {
                    scalar = Unicode.Scalar(0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(unit - 0xDC00))
                } else {
                    scalar = Unicode.Scalar(unit)
                }
                pendingHigh = nil
                text.append(contentsOf: String(scalar ?? "\u{FFFD}").utf8)
            }
            throw Malformed()
        }

        private static let simpleEscapes: [UInt8: UInt8] = [
            UInt8(ascii: "n"): 0x0A, UInt8(ascii: "t"): 0x09, UInt8(ascii: "r"): 0x0D,
            UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C,
        ]

        /// Consumes `byte` if it is next.
        private mutating func peek(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipWhitespace() {
            while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
        }

        private func name(_ path: [String]) -> String { path.joined(separator: ".") }
    }
}
