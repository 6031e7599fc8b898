import Testing

@testable import ParleyAPI

struct RangeSelectionTests {
    @Test func singleOpenAndSuffixRanges() {
        #expect(RangeSelection.evaluate("bytes=0-9", size: 100) == .partial([0..<10]))
        #expect(RangeSelection.evaluate("bytes=90-", size: 100) == .partial([90..<100]))
        #expect(RangeSelection.evaluate("bytes=-10", size: 100) == .partial([90..<100]))
        // A suffix longer than the file is the whole file; a last byte past the end is clipped.
        #expect(RangeSelection.evaluate("bytes=-500", size: 100) == .partial([0..<100]))
        #expect(RangeSelection.evaluate("bytes=50-500", size: 100) == .partial([50..<100]))
        #expect(RangeSelection.evaluate("bytes=99-99", size: 100) == .partial([99..<100]))
    }

    @Test func unsatisfiableRanges() {
        #expect(RangeSelection.evaluate("bytes=100-", size: 100) == .unsatisfiable)
        #expect(RangeSelection.evaluate("bytes=200-300", size: 100) == .unsatisfiable)
        #expect(RangeSelection.evaluate("bytes=-0", size: 100) == .unsatisfiable)
        #expect(RangeSelection.evaluate("bytes=0-", size: 0) == .unsatisfiable)
        // One satisfiable range among others is enough.
        #expect(RangeSelection.evaluate("bytes=200-300, 0-0", size: 100) == .partial([0..<1]))
    }

    @Test func malformedHeadersAreIgnored() {
        for header in ["bytes=10-5", "bytes=abc", "items=0-1", "bytes=", "bytes=1-2-3", "bytes=--1", "bytes=+1-2"] {
            #expect(RangeSelection.evaluate(header, size: 100) == .whole, "\(header)")
        }
        #expect(RangeSelection.evaluate(nil, size: 100) == .whole)
    }

    @Test func severalRangesStayInOrderUnlessTheyOverlapOrAreTooMany() {
        #expect(RangeSelection.evaluate("bytes=50-59, 0-9", size: 100) == .partial([50..<60, 0..<10]))
        #expect(RangeSelection.evaluate("bytes=0-50, 40-60", size: 100) == .whole)
        let many = "bytes=" + (0..<17).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",")
        #expect(RangeSelection.evaluate(many, size: 100) == .whole)
    }

    @Test func preconditions() {
        let rules = Preconditions(entityTag: "\"abc\"", lastModified: 1000)
        #expect(rules.notModified(ifNoneMatch: "\"abc\"", ifModifiedSince: nil))
        #expect(rules.notModified(ifNoneMatch: "\"x\", W/\"abc\"", ifModifiedSince: nil))
        #expect(rules.notModified(ifNoneMatch: "*", ifModifiedSince: nil))
        #expect(!rules.notModified(ifNoneMatch: "\"other\"", ifModifiedSince: 5000))
        #expect(rules.notModified(ifNoneMatch: nil, ifModifiedSince: 1000))
        #expect(!rules.notModified(ifNoneMatch: nil, ifModifiedSince: 999))

        let date: (String) -> Int64? = { $0 == "then" ? 1000 : ($0 == "other" ? 7 : nil) }
        #expect(rules.rangeApplies(ifRange: nil, parseDate: date))
        #expect(rules.rangeApplies(ifRange: "\"abc\"", parseDate: date))
        #expect(!rules.rangeApplies(ifRange: "\"old\"", parseDate: date))
        #expect(!rules.rangeApplies(ifRange: "W/\"abc\"", parseDate: date))
        #expect(rules.rangeApplies(ifRange: "then", parseDate: date))
        #expect(!rules.rangeApplies(ifRange: "other", parseDate: date))
    }
}
