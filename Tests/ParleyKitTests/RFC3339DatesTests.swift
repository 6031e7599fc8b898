import Foundation
import Testing

@testable import ParleyKit

struct RFC3339DatesTests {
    /// Parley writes milliseconds; a timestamp without them (another server, an older answer)
    /// still reads; anything else is an error, not a wrong date.
    @Test func parleysTimestampsReadWithOrWithoutMilliseconds() throws {
        let dates = RFC3339Dates()
        let precise = try dates.decode("2026-11-21T22:43:00.123Z")
        #expect(abs(precise.timeIntervalSince1970 - 1_795_300_980.123) < 0.000_5)
        #expect(try dates.decode("2026-11-21T22:43:00Z").timeIntervalSince1970 == 1_795_300_980)
        #expect(try dates.encode(precise) == "2026-11-21T22:43:00.123Z")
        #expect(throws: DecodingError.self) { try dates.decode("21 Nov 2026") }
    }
}
