import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// Reports, their resolution and account deactivation, over REST on real PostgreSQL.
struct ModerationRoutesTests {
    /// A fresh system administrator's token.
    func admin(_ client: any TestClientProtocol, _ harness: APIHarness) async throws -> String {
        try await AdminRoutesTests().signUpAdmin(client, harness)
    }

    func reports(_ client: any TestClientProtocol, _ admin: String, _ status: String = "open") async throws
        -> [ReportResponse]
    {
        let answer = try await client.json(.get, "/v1/admin/reports?status=\(status)", token: admin)
        #expect(answer.status == .ok)
        return try decode(ListPage<ReportResponse>.self, from: answer.text).items
    }

    @Test func readersReportAMessageOnceAndAdminsSeeItAsItWas() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let (writer, reader) = (users[1], users[2])
            let sent = try await client.send("buy now!!!", uid: "s-1", to: id, as: writer)
            let path = "/v1/rooms/\(id)/messages/\(sent.id)/reports"
            for _ in 0..<2 {
                let answer = try await client.json(
                    .post, path, token: token(reader), body: #"{"reason":"spam","comment":"ads"}"#)
                #expect(answer.status == .accepted)
            }
            let bad = try await client.json(.post, path, token: token(reader), body: #"{"reason":"boring"}"#)
            #expect(bad.status == .badRequest && bad.problem?.field == "reason")
            let outsider = try await client.signUp()
            #expect(
                try await client.json(.post, path, token: token(outsider), body: #"{"reason":"spam"}"#).status
                    == .notFound)
            let (otherRoom, _) = try await client.roomOfThree()
            #expect(
                try await client.json(
                    .post, "/v1/rooms/\(otherRoom)/messages/\(sent.id)/reports", token: token(reader),
                    body: #"{"reason":"spam"}"#
                ).status == .notFound)
            #expect(try await client.json(.get, "/v1/admin/reports", token: token(reader)).status == .forbidden)

            // Edited later, the report still holds what was reported.
            _ = try await client.json(
                .patch, "/v1/rooms/\(id)/messages/\(sent.id)", token: token(writer), body: #"{"content":"hello"}"#)
            let admin = try await admin(client, harness)
            let open = try await reports(client, admin)
            #expect(open.count == 1)
            let report = try #require(open.first)
            #expect(report.status == "open" && report.reason == .spam)
            #expect(report.comment == "ads" && report.ageSeconds >= 0)
            #expect(report.message.content == "buy now!!!" && report.message.seq == sent.seq)
            #expect(report.message.sentById == userID(writer))
            #expect(report.reporter?.id == userID(reader))
            #expect(report.room?.id == Int64(id))

            let reportID = report.id
            let answer = try await client.json(
                .post, "/v1/admin/reports/\(reportID)/resolve", token: admin,
                body: #"{"action":"dismiss","note":"not spam"}"#)
            #expect(answer.status == .ok)
            let resolved = try decode(ReportResponse.self, from: answer.text)
            #expect(resolved.status == "resolved")
            #expect(resolved.action == .dismiss && resolved.note == "not spam")
            #expect(resolved.resolvedById != nil && resolved.resolvedAt != nil)
            let again = try await client.json(
                .post, "/v1/admin/reports/\(reportID)/resolve", token: admin, body: #"{"action":"dismiss"}"#)
            #expect(again.status == .conflict)
            #expect(try await reports(client, admin).isEmpty)
            #expect(try await reports(client, admin, "resolved").count == 1)
            #expect(
                try await client.json(
                    .post, "/v1/admin/reports/999999/resolve", token: admin, body: #"{"action":"dismiss"}"#
                ).status == .notFound)
            #expect(
                try await client.json(
                    .post, "/v1/admin/reports/\(reportID)/resolve", token: admin, body: #"{"action":"ban"}"#
                ).status == .badRequest)
        }
    }

    @Test func resolvingDeletesTheMessageOrDeactivatesItsSender() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let (writer, reader) = (users[1], users[2])
            let first = try await client.send("abuse", uid: "a-1", to: id, as: writer)
            let second = try await client.send("more abuse", uid: "a-2", to: id, as: writer)
            for message in [first, second] {
                _ = try await client.json(
                    .post, "/v1/rooms/\(id)/messages/\(message.id)/reports", token: token(reader),
                    body: #"{"reason":"abuse"}"#)
            }
            let admin = try await admin(client, harness)
            let open = try await reports(client, admin)
            let ids = open.map(\.id)
            #expect(ids.count == 2)

            _ = try await client.json(
                .post, "/v1/admin/reports/\(ids[0])/resolve", token: admin, body: #"{"action":"delete-message"}"#)
            let history = try await client.history(id, as: reader).messages
            #expect(history.first { $0.id == first.id }?.deletedAt != nil)

            _ = try await client.json(
                .post, "/v1/admin/reports/\(ids[1])/resolve", token: admin, body: #"{"action":"deactivate-user"}"#)
            // Signed out at once, and refused at the next login (only when the password is right).
            #expect(try await client.json(.get, "/v1/me", token: token(writer)).status == .unauthorized)
            let login = #"{"email":"\#(writer.user.email ?? "")","password":"correct horse"}"#
            let refused = try await client.json(.post, "/v1/auth/login", body: login)
            #expect(refused.status == .forbidden && refused.problem?.code == "account-deactivated")
            let wrong = try await client.json(
                .post, "/v1/auth/login", body: #"{"email":"\#(writer.user.email ?? "")","password":"wrong horse"}"#)
            #expect(wrong.status == .unauthorized)

            // An administrator lists, finds and reactivates accounts.
            let found = try await client.json(.get, "/v1/admin/users?q=\(writer.user.email ?? "")", token: admin)
            #expect(try decode(ListPage<UserResponse>.self, from: found.text).items.first?.id == userID(writer))
            #expect(
                try await client.json(.post, "/v1/admin/users/\(userID(writer))/reactivate", token: admin).status
                    == .noContent)
            #expect(try await client.json(.post, "/v1/auth/login", body: login).status == .ok)
            #expect(
                try await client.json(.post, "/v1/admin/users/999999999/deactivate", token: admin).status == .notFound)
            let me = try await client.decoded(UserResponse.self, .get, "/v1/me", token: admin)
            #expect(
                try await client.json(.post, "/v1/admin/users/\(me.id)/deactivate", token: admin).status == .badRequest)
            #expect(
                try await client.json(.post, "/v1/admin/users/\(userID(reader))/deactivate", token: token(reader))
                    .status == .forbidden)
        }
    }
}
