/// The spaces and tabs HTTP allows around a field's value and its parameters (RFC 9110's
/// OWS), trimmed by scanning bytes: Foundation's `trimmingCharacters(in:)` bridges through
/// NSString, about 1 % of `serve`'s CPU per REST send on the two calls every send made.
/// The one rule for every header Parley parses (the bearer token, media types, ranges and
/// their preconditions, multipart parameters, an upload's declared type): a no-break space
/// is not HTTP's whitespace.
extension Substring {
    public func trimmingHTTPWhitespace() -> Substring {
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: { !isWhitespace($0) }),
            let last = utf8.lastIndex(where: { !isWhitespace($0) })
        else { return self[endIndex..<endIndex] }
        // Both bounds sit next to an ASCII byte or an end, so they fall between characters.
        return self[first..<utf8.index(after: last)]
    }
}

extension String {
    public func trimmingHTTPWhitespace() -> Substring { self[...].trimmingHTTPWhitespace() }
}
