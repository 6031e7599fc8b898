import NIOCore
import PostgresNIO

/// A `timestamptz` as whole microseconds since 1970, read and written in PostgreSQL's own
/// binary form (microseconds since 2000): exact both ways, where `Date`'s seconds as a
/// `Double` are not, and with no `numeric` arithmetic in the statement, which
/// `extract(epoch FROM …) * 1000000` made for every room the list sorted.
struct UnixMicroseconds: PostgresDecodable, PostgresNonThrowingEncodable, Equatable {
    let value: Int64

    init(_ value: Int64) {
        self.value = value
    }

    /// 2000-01-01, PostgreSQL's epoch, in microseconds since 1970.
    static let postgresEpoch: Int64 = 946_684_800_000_000

    static var psqlType: PostgresDataType { .timestamptz }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // A cursor's value comes from a client: one beyond what a timestamp holds binds as
        // PostgreSQL's -infinity or infinity (Int64's ends), which compare as they should.
        let (stored, overflow) = value.subtractingReportingOverflow(Self.postgresEpoch)
        byteBuffer.writeInteger(
            overflow || !Self.postgresRange.contains(stored) ? (value < 0 ? Int64.min : Int64.max) : stored)
    }

    /// The microseconds since 2000 a PostgreSQL timestamp holds: from 4714-11-24 BC to
    /// 294277-01-01 (`MIN_TIMESTAMP` and `END_TIMESTAMP` in its `datatype/timestamp.h`).
    static let postgresRange: Range<Int64> = -211_813_488_000_000_000..<9_223_371_331_200_000_000

    init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
        context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        guard type == .timestamptz || type == .timestamp else { throw PostgresDecodingError.Code.typeMismatch }
        guard format == .binary, buffer.readableBytes == 8, let stored = buffer.readInteger(as: Int64.self) else {
            throw PostgresDecodingError.Code.failure
        }
        // -infinity and infinity have no microsecond since 1970.
        let (value, overflow) = stored.addingReportingOverflow(Self.postgresEpoch)
        guard !overflow, stored != .min else { throw PostgresDecodingError.Code.failure }
        self.value = value
    }
}
