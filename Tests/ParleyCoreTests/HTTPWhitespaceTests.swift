import ParleyCore
import Testing

/// The spaces and tabs around a header's value (RFC 9110's OWS), the one rule every header
/// Parley reads is trimmed by, and nothing else.
struct HTTPWhitespaceTests {
    @Test func onlySpacesAndTabsAtEitherEndAreTrimmed() {
        #expect(" \t a b \t ".trimmingHTTPWhitespace() == "a b")
        #expect("tok".trimmingHTTPWhitespace() == "tok")
        #expect("".trimmingHTTPWhitespace() == "")
        #expect(" \t ".trimmingHTTPWhitespace() == "")
        #expect("  příliš kůň 😀 ".trimmingHTTPWhitespace() == "příliš kůň 😀")
        // Not HTTP's whitespace: a no-break space and a line break stay.
        #expect("\u{00A0}x\n".trimmingHTTPWhitespace() == "\u{00A0}x\n")
        #expect("ab".dropFirst().trimmingHTTPWhitespace() == "b")
    }

    @Test func anUploadsDeclaredTypeIsTrimmedOfSpacesAndTabsOnly() throws {
        #expect(try MediaType.resolve(declared: " Text/Plain\t; charset=utf-8", leadingBytes: []) == "text/plain")
        #expect(try MediaType.resolve(declared: "\tapplication/zip ", leadingBytes: []) == "application/zip")
        // A no-break space is not HTTP's whitespace: the type is malformed, stored as bytes.
        #expect(
            try MediaType.resolve(declared: "\u{00A0}text/plain", leadingBytes: []) == "application/octet-stream")
        #expect(
            try MediaType.resolve(declared: "text/plain\u{00A0};q=1", leadingBytes: []) == "application/octet-stream")
    }
}
