/// A Redis reply (RESP2).
public enum RedisValue: Sendable, Equatable {
    case null
    case status(String)
    case integer(Int64)
    case bulk([UInt8])
    case array([RedisValue])
    /// An error inside an array reply (a failed command of a `MULTI`/`EXEC`); an error as the
    /// whole reply is thrown as ``RedisError/server(_:)`` instead.
    case error(String)

    /// The reply as text, for bulk strings and status replies.
    public var string: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        case .integer(let value): String(value)
        default: nil
        }
    }

    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .bulk(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    public var array: [RedisValue]? {
        if case .array(let values) = self { return values }
        return nil
    }
}
