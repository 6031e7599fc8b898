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

    @Test func everyDayEndAndRandomInstantsAgree() {
        var random = SplitMix64(seed: 0x5EED)
        var dates: [Date] = []
        // The last millisecond of every 97th day to 9999, and instants of microsecond precision
        // (a clock's) and of any precision across the whole range.
        for day in stride(from: 0, to: 2_932_897, by: 97) {
            dates.append(Date(timeIntervalSince1970: Double(day) * 86_400 + 86_399.999))
        }
        for _ in 0..<20_000 {
            let micros = Double(Int.random(in: 1_600_000_000_000_000..<2_100_000_000_000_000, using: &random))
            dates.append(Date(timeIntervalSince1970: micros / 1_000_000))
            dates.append(Date(timeIntervalSince1970: Double.random(in: 0..<253_402_300_800, using: &random)))
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

/// A reproducible stream of pseudo-random numbers, so a failing case recurs.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
