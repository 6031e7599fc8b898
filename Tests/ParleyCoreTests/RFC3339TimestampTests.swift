import Foundation
import Testing

@testable import ParleyCore

/// The hand-written timestamp is Foundation's format style's, digit for digit: the same
/// calendar, the same truncated milliseconds, whatever the date.
struct RFC3339TimestampTests {
    let foundation = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!)

    @Test(arguments: [
        0, 0.0005, 0.9995, 0.999_999_999_999, 1.9999, 59.9996, 86_399.9999, 951_782_400, 951_868_799.999,
        1_700_000_000.123, 1_700_000_000.122_999_9, 4_102_444_800.5, 253_402_300_799.999,
    ])
    func aDateIsWrittenAsFoundationWritesIt(_ interval: TimeInterval) {
        let date = Date(timeIntervalSince1970: interval)
        #expect(JSONCoding.timestamp(date) == date.formatted(foundation))
    }

    @Test func everyDayEndAndScatteredInstantsAgree() {
        var dates: [Date] = []
        // The last millisecond of every 97th day to 9999, and instants scattered over the years
        // (by a step of the golden ratio, the same on every run) of microsecond precision (a
        // clock's) and of any precision across the whole range.
        for day in stride(from: 0, to: 2_932_897, by: 97) {
            dates.append(Date(timeIntervalSince1970: Double(day) * 86_400 + 86_399.999))
        }
        for index: UInt64 in 1...20_000 {
            let scatter = index &* 0x9E37_79B9_7F4A_7C15
            let micros = 1_600_000_000_000_000 + scatter % 500_000_000_000_000
            dates.append(Date(timeIntervalSince1970: Double(micros) / 1_000_000))
            dates.append(Date(timeIntervalSince1970: Double(scatter >> 11) / Double(1 << 53) * 253_402_300_800))
        }
        let mismatches = dates.filter { JSONCoding.timestamp($0) != $0.formatted(foundation) }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3).map { $0.timeIntervalSince1970 })")
    }

    @Test(arguments: [-0.001, -86_400.5, -62_135_596_800, 253_402_300_800, 1e12])
    func aDateOutsideTheCommonErasIsFoundations(_ interval: TimeInterval) {
        let date = Date(timeIntervalSince1970: interval)
        var bytes: [UInt8] = []
        #expect(!RFC3339Timestamp.append(date, to: &bytes))
        #expect(bytes.isEmpty)
        #expect(JSONCoding.timestamp(date) == date.formatted(foundation))
    }

    @Test func aValueEncodedOrWrittenByHandCarriesTheSameTimestamp() throws {
        let date = Date(timeIntervalSince1970: 1_764_543_600.25)
        var writer = JSONHandWriter()
        writer.beginObject()
        writer.key("at")
        writer.date(date)
        writer.key("never")
        writer.date(nil)
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"at":"2025-11-30T23:00:00.250Z","never":null}"#)
        #expect(
            String(decoding: try JSONBytesEncoder().encode(["at": date]), as: UTF8.self)
                == #"{"at":"2025-11-30T23:00:00.250Z"}"#)
    }
}
