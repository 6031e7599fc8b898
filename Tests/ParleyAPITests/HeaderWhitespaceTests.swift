import HTTPTypes
import Hummingbird
import Testing

@testable import ParleyAPI

/// The headers read without the spaces and tabs around their values (RFC 9110's OWS, the
/// rule ParleyCore's `HTTPWhitespaceTests` hold), and nothing else.
struct HeaderWhitespaceTests {
    @Test func theBearerTokenIsReadInAnyCaseWithoutTheWhitespaceAroundIt() {
        func token(_ authorization: String?) -> String? {
            var fields = HTTPFields()
            if let authorization { fields[.authorization] = authorization }
            let request = Request(
                head: HTTPRequest(method: .get, scheme: "https", authority: "x", path: "/", headerFields: fields),
                body: .init(buffer: .init()))
            return AccessTokens.bearer(request)
        }
        #expect(token("Bearer abc") == "abc")
        #expect(token("bEaReR \t abc \t") == "abc")
        #expect(token("Basic abc") == nil)
        #expect(token("Bearer") == nil)
        #expect(token(nil) == nil)
        #expect(token("Bearer " + String(repeating: "a", count: 1_100)) == nil)
    }

    @Test func theJSONMediaTypeIsReadWithParametersInAnyCase() {
        #expect(JSONBody.isJSON("application/json"))
        #expect(JSONBody.isJSON(" Application/JSON ; charset=utf-8"))
        #expect(JSONBody.isJSON("application/json\t;charset=UTF-8"))
        #expect(!JSONBody.isJSON("application/jsonx"))
        #expect(!JSONBody.isJSON("text/plain"))
        #expect(!JSONBody.isJSON(nil))
    }

    @Test func rangesAndTheirPreconditionsTrimSpacesAndTabsOnly() {
        #expect(RangeSelection.evaluate("\tbytes=0-9 ,\t90- ", size: 100) == .partial([0..<10, 90..<100]))
        // A no-break space is not HTTP's whitespace: the spec is malformed, the range ignored.
        #expect(RangeSelection.evaluate("bytes=0-9,\u{00A0}90-", size: 100) == .whole)
        let rules = Preconditions(entityTag: "\"abc\"", lastModified: 1000)
        #expect(rules.notModified(ifNoneMatch: "\t\"x\" ,\tW/\"abc\" ", ifModifiedSince: nil))
        #expect(!rules.notModified(ifNoneMatch: "\u{00A0}\"abc\"", ifModifiedSince: nil))
        #expect(rules.rangeApplies(ifRange: " \"abc\"\t", parseDate: { _ in nil }))
        #expect(rules.rangeApplies(ifRange: "\tthen ", parseDate: { $0 == "then" ? 1000 : nil }))
    }

    @Test func multipartParametersTrimSpacesAndTabsOnly() {
        #expect(MultipartUpload.boundary(of: "multipart/form-data;\tboundary = \"b-1\" ") == "b-1")
        #expect(MultipartUpload.boundary(of: "multipart/form-data; \u{00A0}boundary=b-1") == nil)
        let disposition = "form-data;\tname=\"file\" ;\tfilename = a b.txt\t"
        #expect(MultipartUpload.parameter("name", in: disposition) == "file")
        #expect(MultipartUpload.parameter("filename", in: disposition) == "a b.txt")
        #expect(MultipartUpload.parameter("name", in: "form-data; \u{00A0}name=file") == nil)
    }
}
