import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyPostgres

/// The room list's activity: a `timestamptz` read and bound as whole microseconds since 1970,
/// the same number `extract(epoch FROM …) * 1000000` gives.
struct UnixMicrosecondsTests {
    @Test func aTimestampReadsAndBindsAsItsMicrosecondsSince1970() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let moment = "2026-12-02 07:45:12.345678+00"
            let read = try await pool.client.query(
                "SELECT \(unescaped: "'\(moment)'")::timestamptz, (extract(epoch FROM \(unescaped: "'\(moment)'")::timestamptz) * 1000000)::bigint",
                logger: .quiet
            ).first((UnixMicroseconds, Int64).self)
            #expect(read?.0.value == 1_796_197_512_345_678)
            #expect(read?.0.value == read?.1)
            // Bound, it is the same moment again.
            let same = try await pool.client.query(
                "SELECT \(UnixMicroseconds(1_796_197_512_345_678)) = \(unescaped: "'\(moment)'")::timestamptz",
                logger: .quiet
            ).first(Bool.self)
            #expect(same == true)
        }
    }

    @Test func anyValueACursorCanHoldBindsWithoutAnError() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let ends = try await pool.client.query(
                "SELECT \(UnixMicroseconds(.max)) > now() + interval '100000 years', \(UnixMicroseconds(.min)) = '-infinity'::timestamptz, \(UnixMicroseconds(-250_000_000_000_000_000)) = '-infinity'::timestamptz",
                logger: .quiet
            ).first((Bool, Bool, Bool).self)
            // Beyond 4714 BC, where a timestamp ends, is -infinity rather than an error.
            #expect(ends?.0 == true && ends?.1 == true && ends?.2 == true)
            // PostgreSQL's infinity is no moment since 1970.
            await #expect(throws: (any Error).self) {
                _ = try await pool.client.query("SELECT 'infinity'::timestamptz", logger: .quiet).first(
                    UnixMicroseconds.self)
            }
        }
    }
}
