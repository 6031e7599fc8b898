import HTTPTypes
import Hummingbird
import Testing

@testable import ParleyAPI

/// The spaces and tabs around a header's value (RFC 9110's OWS): what the bearer token and the
/// JSON media type are read without, and nothing else.
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
}
