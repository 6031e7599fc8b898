import Foundation
import ParleyCore
import ParleyPostgres
import Testing

@testable import ParleyAPI

/// A deleted message lets its file go: the orphan sweep removes it once no message carries it.
extension FileRoutesTests {
    @Test func aDeletedMessagesFileIsSweptOnceNoMessageCarriesIt() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let writer = users[1]
            let upload = try await upload(client, token: token(writer), Array("attached".utf8))
            let fileID = try #require(upload.file?.id)
            var sent: [Message] = []
            for uid in ["f-1", "f-2"] {
                sent.append(
                    try await client.decoded(
                        Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer),
                        body: #"{"content":"see","uid":"\#(uid)","fileId":\#(fileID)}"#))
            }
            let files = PostgresFileRepository(database: harness.database, logger: .quiet)
            func orphaned() async throws -> Bool {
                try await files.orphans(
                    createdBefore: Date().addingTimeInterval(60), publicCreatedBefore: Date().addingTimeInterval(60),
                    limit: 100
                ).contains {
                    $0.id == fileID
                }
            }
            #expect(try await !orphaned())
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(sent[0].id)", token: token(writer)).status
                    == .noContent)
            // The other message still carries it.
            #expect(try await !orphaned())
            let history = try await client.history(id, as: users[2]).messages
            #expect(history.first { $0.id == sent[0].id }?.file == nil)
            #expect(history.first { $0.id == sent[1].id }?.file?.id == fileID)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(sent[1].id)", token: token(writer)).status
                    == .noContent)
            #expect(try await orphaned())
        }
    }
}

extension FileRoutesTests {
    @Test func aReportedMessagesFileIsKeptWhileTheReportIsOpen() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let (writer, reader) = (users[1], users[2])
            let upload = try await upload(client, token: token(writer), Array("evidence".utf8))
            let fileID = try #require(upload.file?.id)
            let sent = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body: #"{"content":"look","uid":"e-1","fileId":\#(fileID)}"#)
            _ = try await client.json(
                .post, "/v1/rooms/\(id)/messages/\(sent.id)/reports", token: token(reader),
                body: #"{"reason":"illegal"}"#)
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(sent.id)", token: token(writer)).status
                    == .noContent)
            let files = PostgresFileRepository(database: harness.database, logger: .quiet)
            func orphaned() async throws -> Bool {
                try await files.orphans(
                    createdBefore: Date().addingTimeInterval(60), publicCreatedBefore: Date().addingTimeInterval(60),
                    limit: 100
                ).contains {
                    $0.id == fileID
                }
            }
            #expect(try await !orphaned())
            #expect(try await files.deleteOrphan(id: fileID) == nil)
            let admin = try await AdminRoutesTests().signUpAdmin(client, harness)
            let reports = try await client.decoded(
                ListPage<ReportResponse>.self, .get, "/v1/admin/reports", token: admin)
            let report = try #require(reports.items.first?.id)
            _ = try await client.json(
                .post, "/v1/admin/reports/\(report)/resolve", token: admin, body: #"{"action":"dismiss"}"#)
            #expect(try await orphaned())
        }
    }
}
