import Foundation

/// A UTC timestamp with milliseconds (`2026-11-21T22:43:00.123Z`), written by hand: Foundation's
/// `ISO8601FormatStyle` made a tenth of the room list's JSON cost (three dates a room), and every
/// event carries one. The digits are the format style's, milliseconds truncated as it truncates
/// them; a date before 1970 or after 9999 is left to it (its calendar is not the proleptic
/// Gregorian one before 1582, and a year of five digits is its own).
enum RFC3339Timestamp {
    /// 9999-12-31T23:59:59.999Z and earlier.
    private static let end: TimeInterval = 253_402_300_800

    /// `date`'s digits appended to `output`, or false (nothing appended) outside 1970 to 9999.
    static func append(_ date: Date, to output: inout [UInt8]) -> Bool {
        let interval = date.timeIntervalSince1970
        guard interval >= 0, interval < end else { return false }
        let whole = interval.rounded(.down)
        // The format style's own arithmetic: the fraction of the second, times 1000, truncated.
        let millisecond = min(Int((interval - whole) * 1000), 999)
        let seconds = Int(whole)
        let (year, month, day) = civil(daysSince1970: seconds / 86_400)
        let second = seconds % 86_400
        digits(year, 4, to: &output)
        output.append(UInt8(ascii: "-"))
        digits(month, 2, to: &output)
        output.append(UInt8(ascii: "-"))
        digits(day, 2, to: &output)
        output.append(UInt8(ascii: "T"))
        digits(second / 3_600, 2, to: &output)
        output.append(UInt8(ascii: ":"))
        digits(second / 60 % 60, 2, to: &output)
        output.append(UInt8(ascii: ":"))
        digits(second % 60, 2, to: &output)
        output.append(UInt8(ascii: "."))
        digits(millisecond, 3, to: &output)
        output.append(UInt8(ascii: "Z"))
        return true
    }

    /// Year, month and day of a day counted from 1970-01-01 (not before it), in the proleptic
    /// Gregorian calendar: Howard Hinnant's `civil_from_days`, eras of 400 years from 0000-03-01.
    static func civil(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int, _ width: Int, to output: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            output.append(UInt8(truncatingIfNeeded: 0x30 + value / divisor % 10))
            divisor /= 10
        }
    }
}
