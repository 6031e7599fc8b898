import Foundation
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Messages that carry more than text: a type, the app's metadata and several attachments,
/// answered alike by the send, history, a retry and the canonical event.
@Suite struct RichMessageTests {
    private let files = FileRoutesTests()

    @Test func aTypeAndMetadataAreStoredAndAnsweredAsSent() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let body = #"""
                {"content":"Lunch?","uid":"poll-1","type":"x-poll.v2","metadata":{"options":["pizza","sushi"],
                 "closes":1764400000,"weight":0.5,"anonymous":false,"note":null,"nested":{"a":{"b":[1,[2]]}}}}
                """#
            let sent = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(sent.status == .created)
            let message = try decode(Message.self, from: sent.text)
            #expect(message.type == MessageType(rawValue: "x-poll.v2"))
            let expected: [String: JSONValue] = [
                "options": .array([.string("pizza"), .string("sushi")]), "closes": .integer(1_764_400_000),
                "weight": .number(0.5), "anonymous": .bool(false), "note": .null,
                "nested": .object(["a": .object(["b": .array([.integer(1), .array([.integer(2)])])])]),
            ]
            #expect(message.metadata?.members == expected)
            #expect(message.attachments.isEmpty && message.file == nil)
            // A retry with the uid answers the same message; history carries it as sent.
            let again = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(again.status == .ok && again.text == sent.text)
            let stored = try #require(try await client.history(id, as: users[2]).messages.last)
            #expect(stored.type == message.type && stored.metadata == message.metadata)
            // A plain message says so: type text, metadata null, no attachments.
            let plain = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: #"{"content":"hi","uid":"p"}"#)
            #expect(plain.json["type"] as? String == "text")
            #expect(plain.json["metadata"] is NSNull)
            #expect((plain.json["attachments"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: [
        (#"{"content":"x","uid":"t","type":"system"}"#, "type"),
        (#"{"content":"x","uid":"t","type":"poll"}"#, "type"),
        (#"{"content":"x","uid":"t","type":"x-"}"#, "type"),
        (#"{"content":"x","uid":"t","type":"x-Poll"}"#, "type"),
        (#"{"content":"x","uid":"t","metadata":[1]}"#, "metadata"),
        (#"{"content":"x","uid":"t","metadata":"text"}"#, "metadata"),
        (#"{"content":"x","uid":"t","metadata":\#(RichMessageTests.nested(9))}"#, "metadata"),
        (#"{"content":"x","uid":"t","metadata":{"big":"\#(String(repeating: "a", count: 8200))"}}"#, "metadata"),
        (#"{"content":"x","uid":"t","fileId":1,"attachments":[1]}"#, "attachments"),
        (#"{"content":"x","uid":"t","attachments":[1,2,3,4,5,6,7,8,9,10,11]}"#, "attachments"),
        (#"{"content":"x","uid":"t","attachments":[1,1]}"#, "attachments"),
        (#"{"content":"","uid":"t","attachments":[]}"#, "content"),
    ])
    func aMessageBeyondTheContractIsRefusedNamingItsField(_ body: String, _ field: String) async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let answer = try await client.json(.post, "/v1/rooms/\(id)/messages", token: token(users[1]), body: body)
            #expect(answer.status == .badRequest)
            #expect(answer.problem?.code == "invalid-request")
            #expect(answer.problem?.field == field)
            #expect(try await client.history(id, as: users[1]).messages.map(\.uid) == ["first"])
        }
    }

    /// Eight levels (the outer object is the first; arrays count) is the most.
    static func nested(_ levels: Int) -> String {
        var json = "1"
        for level in (1...levels).reversed() { json = level % 2 == 0 ? "[\(json)]" : #"{"k":\#(json)}"# }
        return json
    }

    @Test func metadataAtTheLimitsIsTaken() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            // The compact JSON {"big":"…"} is 8,192 bytes.
            let big = String(repeating: "a", count: 8192 - #"{"big":""}"#.utf8.count)
            for (uid, metadata) in [("deep", Self.nested(8)), ("big", #"{ "big" : "\#(big)" }"#)] {
                let answer = try await client.json(
                    .post, "/v1/rooms/\(id)/messages", token: token(users[1]),
                    body: #"{"content":"x","uid":"\#(uid)","metadata":\#(metadata)}"#)
                #expect(answer.status == .created, "\(uid): \(answer.text)")
            }
        }
    }

    @Test func attachmentsAreTheSendersFilesInOrderAndEachReadableByTheRoom() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let (writer, reader) = (users[1], users[2])
            var fileIDs: [Int64] = []
            for name in ["a", "b", "c"] {
                let upload = try await files.upload(
                    client, token: token(writer), Array(name.utf8), query: "name=\(name).txt")
                fileIDs.append(try #require(upload.file?.id))
            }
            let ordered = [fileIDs[2], fileIDs[0], fileIDs[1]]
            let body = #"{"content":"","uid":"att-1","attachments":\#(ordered)}"#
            let sent = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer), body: body)
            #expect(sent.attachments.map(\.id) == ordered)
            #expect(sent.file?.id == ordered[0] && sent.fileId == ordered[0])
            let again = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(writer), body: body)
            #expect(again.attachments.map(\.id) == ordered)
            let stored = try #require(try await client.history(id, as: reader).messages.last)
            #expect(
                stored.attachments.map(\.id) == ordered
                    && stored.attachments.map(\.name) == sent.attachments.map(\.name))
            // Every attachment is the room's to read, not only the first.
            for fileID in ordered {
                let answer = try await files.send(client, .get, "/v1/files/\(fileID)", token: token(reader))
                #expect(answer.status == .ok, "file \(fileID)")
            }
            // Another user's upload is not the writer's to attach; nothing is stored.
            let foreign = try await files.upload(client, token: token(reader), Array("r".utf8))
            let refused = try await client.json(
                .post, "/v1/rooms/\(id)/messages", token: token(writer),
                body:
                    #"{"content":"x","uid":"att-2","attachments":[\#(fileIDs[0]),\#(try #require(foreign.file?.id))]}"#
            )
            #expect(refused.problem?.code == "file-unavailable" && refused.problem?.field == "attachments")
            // A deletion lets every file go.
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(sent.id)", token: token(writer)).status
                    == .noContent)
            let tombstone = try #require(try await client.history(id, as: reader).messages.last)
            #expect(tombstone.attachments.isEmpty && tombstone.file == nil)
            let orphans = try await PostgresFileRepository(database: harness.database, logger: .quiet).orphans(
                createdBefore: Date().addingTimeInterval(60), publicCreatedBefore: Date().addingTimeInterval(60),
                limit: 100)
            #expect(Set(ordered).isSubset(of: Set(orphans.map(\.id))))
        }
    }

    @Test func anOpenReportKeepsEveryFileOfItsDeletedMessage() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            var fileIDs: [Int64] = []
            for name in ["x", "y"] {
                let upload = try await files.upload(client, token: token(users[1]), Array(name.utf8))
                fileIDs.append(try #require(upload.file?.id))
            }
            let sent = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(users[1]),
                body: #"{"content":"evidence","uid":"r-1","attachments":\#(fileIDs)}"#)
            let report = try await client.json(
                .post, "/v1/rooms/\(id)/messages/\(sent.id)/reports", token: token(users[2]),
                body: #"{"reason":"illegal"}"#)
            #expect(report.status.code < 300, "\(report.text)")
            #expect(
                try await client.json(.delete, "/v1/rooms/\(id)/messages/\(sent.id)", token: token(users[1])).status
                    == .noContent)
            let orphans = try await PostgresFileRepository(database: harness.database, logger: .quiet).orphans(
                createdBefore: Date().addingTimeInterval(60), publicCreatedBefore: Date().addingTimeInterval(60),
                limit: 100)
            #expect(Set(orphans.map(\.id)).isDisjoint(with: fileIDs))
        }
    }

    @Test func anEditReplacesOrClearsTheMetadataAndKeepsItWhenAbsent() async throws {
        try await APIHarness.make().run { client in
            let (id, users) = try await client.roomOfThree()
            let sent = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(id)/messages", token: token(users[1]),
                body: #"{"content":"v1","uid":"e-1","type":"x-card","metadata":{"v":1}}"#)
            let uri = "/v1/rooms/\(id)/messages/\(sent.id)"
            let kept = try await client.decoded(
                Message.self, .patch, uri, token: token(users[1]), body: #"{"content":"v2"}"#)
            #expect(kept.metadata?.members == ["v": .integer(1)] && kept.type == sent.type)
            let replaced = try await client.decoded(
                Message.self, .patch, uri, token: token(users[1]), body: #"{"content":"v2","metadata":{"v":2}}"#)
            #expect(replaced.metadata?.members == ["v": .integer(2)])
            let cleared = try await client.decoded(
                Message.self, .patch, uri, token: token(users[1]), body: #"{"content":"v2","metadata":null}"#)
            #expect(cleared.metadata == nil)
            let refused = try await client.json(
                .patch, uri, token: token(users[1]), body: #"{"content":"v3","metadata":\#(Self.nested(9))}"#)
            #expect(refused.problem?.field == "metadata")
        }
    }

    @Test func aRoomsFirstMessageCarriesThemTooAndNamesItsFields() async throws {
        try await APIHarness.make().run { client in
            let users = try await client.signUp(count: 3)
            let room = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body: #"""
                    {"name":"R","members":[{"userId":\#(userID(users[1])),"role":"writer"},
                     {"userId":\#(userID(users[2])),"role":"reader"}],
                     "firstMessage":{"content":"hi","uid":"0","type":"x-hello","metadata":{"k":"v"}}}
                    """#)
            #expect(room.status == .created, "\(room.text)")
            let roomID = try #require(room.json["id"] as? Int)
            let first = try #require(try await client.history(roomID, as: users[1]).messages.first)
            #expect(first.type.rawValue == "x-hello" && first.metadata?.members == ["k": .string("v")])
            let refused = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body: #"{"name":"R","members":[],"firstMessage":{"content":"hi","uid":"0","type":"system"}}"#)
            #expect(refused.problem?.field == "firstMessage.type")
        }
    }
}

extension BrokerPluginTests {
    @Test func chatInCarriesTypeMetadataAndAttachmentsAndRejectsBeyondTheContractByUID() async throws {
        let broker = try await withBroker(relay: true, ingest: true) { api, broker in
            let users = try await api.signUp(count: 3)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "reader"), (users[2], "reader")], name: "In")
            let upload = try await FileRoutesTests().upload(api, token: token(users[0]), Array("x".utf8))
            let fileID = try #require(upload.file?.id)
            let writer = try await connected(try mqtt(broker, login: users[0]))
            let listener = try await connected(try mqtt(broker, login: users[1]))
            try await listener.subscribe(Topic.room(uid))
            try await writer.subscribe(Topic.notifications(userID(users[0])))

            try await writer.publish(
                topic: "chat-in/\(uid)",
                string:
                    #"{"type":"new-message-notification","data":{"uid":"rich-1","type":"x-card","metadata":{"k":[1]},"attachments":[\#(fileID)]},"hash":"h"}"#
            )
            let event = try #require(
                await envelope(listener, "new-message-notification", of: Message.self) { $0.uid == "rich-1" })
            #expect(
                event.data.type.rawValue == "x-card" && event.data.metadata?.members == ["k": .array([.integer(1)])])
            #expect(event.data.attachments.map(\.id) == [fileID] && event.data.content.isEmpty)

            try await writer.publish(
                topic: "chat-in/\(uid)",
                string:
                    #"{"type":"new-message-notification","data":{"content":"x","uid":"rich-2","type":"system"},"hash":"h2"}"#
            )
            let rejected = try #require(
                await envelope(writer, "message-rejected", of: RoomEvent.Rejection.self) { $0.uid == "rich-2" })
            #expect(rejected.data.code == .invalidRequest && rejected.data.chatRoomId == Int64(roomID))
        }
        #expect(await broker.stop() == 0)
    }
}
