import Foundation
import ParleyCore
import Testing

@testable import ParleyAPI

/// Answers the API only wrote before the tests read them as its own types: read and written
/// again, each is the same bytes, its null keys still null and its absent keys still absent.
struct AnswerRoundTripTests {
    func rewritten<Answer: Codable>(_ type: Answer.Type, _ text: String) throws -> String {
        let answer = try JSONCoding.decoder.decode(Answer.self, from: Data(text.utf8))
        return String(decoding: try JSONCoding.encoder.encode(answer), as: UTF8.self)
    }

    @Test func aReportPageWithEveryEmptyKeyNullIsWrittenAsItWasRead() throws {
        let time = "2026-01-01T00:00:00.000Z"
        let report =
            #"{"action":null,"ageSeconds":5,"comment":null,"createdAt":"\#(time)","id":1,"#
            + #""message":{"content":"x","createdAt":"\#(time)","fileId":null,"id":null,"sentById":null,"seq":2},"#
            + #""note":null,"reason":"spam","reporter":null,"resolvedAt":null,"resolvedById":null,"#
            + #""room":{"id":3,"name":null,"type":"twoparty","uid":"u"},"status":"open"}"#
        let page = #"{"nextCursor":null,"reports":[\#(report)]}"#
        let written = try rewritten(ListPage<ReportResponse>.self, page)
        #expect(written == page, "\(written)")
    }

    @Test func pagesInvitationsAppsAndBrokerAnswersAreWrittenAsTheyWereRead() throws {
        let texts: [(any Codable.Type, String)] = [
            (ListPage<SearchResultBody>.self, #"{"nextCursor":"9","results":[]}"#),
            (ListPage<FileObject>.self, #"{"files":[],"nextCursor":null}"#),
            (
                InvitationResponse.self,
                #"{"invitation":{"createdAt":"2026-01-01T00:00:00.000Z","id":1,"#
                    + #""inviter":{"firstName":"A","id":2,"lastName":"B"},"room":{"id":3,"name":"T","type":"multiparty"}}}"#
            ),
            (ApplicationsResponse.self, #"{"apps":[]}"#),
            // The brokers' answers leave an empty key out.
            (BrokerAuthController.GoAuthAnswer.self, #"{"error":"no","ok":false}"#),
            (BrokerAuthController.GoAuthAnswer.self, #"{"implies":["2 chat-in/u"],"ok":true}"#),
            (BrokerAuthController.EMQXAnswer.self, #"{"expire_at":5,"is_superuser":false,"result":"allow"}"#),
            (BrokerAuthController.EMQXAnswer.self, #"{"result":"deny"}"#),
        ]
        for (type, text) in texts {
            #expect(try rewritten(type, text) == text, "\(type)")
        }
    }

    @Test func aPageUnderAnotherKeyIsNotRead() {
        #expect(throws: DecodingError.self) {
            try JSONCoding.decoder.decode(
                ListPage<UserResponse>.self, from: Data(#"{"members":[],"nextCursor":null}"#.utf8))
        }
    }
}
