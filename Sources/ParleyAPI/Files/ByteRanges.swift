import ParleyCore

/// What a `Range` header asks of a representation of `size` bytes (RFC 9110 §14).
public enum RangeSelection: Sendable, Equatable {
    /// No usable `Range`: send everything (200).
    case whole
    /// Satisfiable ranges in the order asked (206; several as `multipart/byteranges`).
    case partial([Range<Int64>])
    /// Nothing satisfiable (416 with `Content-Range: bytes */size`).
    case unsatisfiable

    /// More ranges than this, or overlapping ones, are answered with the whole content (a
    /// server may ignore a Range header, and this defeats range-amplification requests).
    public static let maximumRanges = 16

    public static func evaluate(_ header: String?, size: Int64) -> RangeSelection {
        guard let header = header?.trimmingHTTPWhitespace() else { return .whole }
        let lowered = header.lowercased()
        guard lowered.hasPrefix("bytes=") else { return .whole }
        let specs = header.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        guard !specs.isEmpty, specs.count <= maximumRanges else { return .whole }
        var ranges: [Range<Int64>] = []
        for spec in specs {
            guard let parsed = parse(spec.trimmingHTTPWhitespace()) else { return .whole }
            if let range = resolve(parsed, size: size) { ranges.append(range) }
        }
        guard !ranges.isEmpty else { return .unsatisfiable }
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        for (left, right) in zip(sorted, sorted.dropFirst()) where left.upperBound > right.lowerBound {
            return .whole
        }
        return .partial(ranges)
    }

    enum Spec: Equatable {
        case from(Int64, through: Int64?)
        case suffix(Int64)
    }

    /// `first-last`, `first-` or `-suffix`; nil for anything malformed.
    static func parse(_ spec: Substring) -> Spec? {
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        func number(_ text: Substring) -> Int64? {
            guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) else {
                return nil
            }
            return Int64(text)
        }
        if first.isEmpty {
            guard let suffix = number(last) else { return nil }
            return .suffix(suffix)
        }
        guard let start = number(first) else { return nil }
        if last.isEmpty { return .from(start, through: nil) }
        guard let end = number(last), end >= start else { return nil }
        return .from(start, through: end)
    }

    /// The bytes a spec selects, or nil when it selects none.
    static func resolve(_ spec: Spec, size: Int64) -> Range<Int64>? {
        switch spec {
        case .from(let start, let end):
            guard start < size else { return nil }
            return start..<(min(end ?? (size - 1), size - 1) + 1)
        case .suffix(let length):
            guard length > 0, size > 0 else { return nil }
            return max(size - length, 0)..<size
        }
    }
}

/// `If-None-Match`, `If-Modified-Since` and `If-Range` against a strong ETag and a
/// modification time (RFC 9110 §13).
public struct Preconditions: Sendable {
    public let entityTag: String
    /// Whole seconds; HTTP dates carry no more.
    public let lastModified: Int64

    public init(entityTag: String, lastModified: Int64) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Whether the client's copy is current (answer 304).
    public func notModified(ifNoneMatch: String?, ifModifiedSince: Int64?) -> Bool {
        if let ifNoneMatch {
            // Weak comparison: W/ prefixes do not matter here.
            return ifNoneMatch.split(separator: ",").contains { candidate in
                let tag = candidate.trimmingHTTPWhitespace()
                return tag == "*" || (tag.hasPrefix("W/") ? tag.dropFirst(2) : tag) == entityTag
            }
        }
        if let ifModifiedSince { return lastModified <= ifModifiedSince }
        return false
    }

    /// Whether a `Range` may be honoured: no `If-Range`, or one naming this representation
    /// (a strong ETag, or exactly its modification date).
    public func rangeApplies(ifRange: String?, parseDate: (String) -> Int64?) -> Bool {
        guard let ifRange = ifRange?.trimmingHTTPWhitespace() else { return true }
        if ifRange.hasPrefix("\"") { return ifRange == entityTag }
        if ifRange.hasPrefix("W/") { return false }
        return parseDate(String(ifRange)) == lastModified
    }
}
