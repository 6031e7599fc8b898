import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyRedis
import ParleyWorker
import Synchronization
import Testing

@testable import ParleyAPI

/// Group commit against real PostgreSQL: sends stored together keep every rule a send
/// stored alone keeps (idempotent uid, gap-free `seq`, refusals one by one).
struct SendBatchTests {
    /// A room of three (admin, writer, reader) and a room service over the harness's database.
    struct Room: Sendable {
        let harness: APIHarness
        let client: any TestClientProtocol
        let id: Int64
        let uid: String
        let admin: Int64
        let writer: Int64
        let reader: Int64
        /// Access tokens of the admin, the writer and the reader.
        let tokens: [String]
        let service: RoomService

        func send(_ sender: Int64, _ uid: String, _ content: String = "hi", file: Int64? = nil) throws
            -> MessageSubmission
        {
            MessageSubmission(
                roomID: id, senderID: sender, message: try NewMessage(content: content, uid: uid, fileId: file))
        }

        /// Every stored message's seq, through the history route, page by page.
        func storedSeqs() async throws -> [Int64] {
            let path = "/v1/rooms/\(id)/messages?limit=200"
            return try await client.pages(
                MessagesResponse.self, path + "&after=0", following: { path + "&cursor=\($0)" }, token: tokens[0]
            ) { ($0.messages.map(\.seq), $0.nextCursor) }.flatMap { $0 }
        }
    }

    func withRoom(_ body: @escaping @Sendable (Room) async throws -> Void) async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (id, users) = try await client.roomOfThree()
            let room = try await client.decoded(RoomResponse.self, .get, "/v1/rooms/\(id)", token: token(users[0]))
            try await body(
                Room(
                    harness: harness, client: client, id: room.id, uid: room.uid,
                    admin: userID(users[0]), writer: userID(users[1]), reader: userID(users[2]),
                    tokens: users.map(token),
                    service: harness.roomService))
        }
    }

    @Test func aUIDRepeatedInsideABatchIsStoredOnceAndTheRepeatAnswersAsARetry() async throws {
        try await withRoom { room in
            let outcomes = try await room.service.send([
                try room.send(room.writer, "a"), try room.send(room.admin, "b"),
                try room.send(room.writer, "a", "a different text"), try room.send(room.writer, "c"),
            ])
            let sent = try outcomes.map { try $0.get() }
            #expect(sent.map(\.created) == [true, true, false, true])
            #expect(sent.map(\.message.seq) == [2, 3, 2, 4])
            // The same message, its receipts as they stand now (the admin's send read it).
            var retried = sent[2].message
            retried.receipts = sent[0].message.receipts
            #expect(retried == sent[0].message)
            #expect(sent[2].message.receipts == MessageReceipts(delivered: 1, read: 1))
            #expect(try await room.storedSeqs() == [1, 2, 3, 4])
        }
    }

    @Test func aSendRefusedInsideABatchFailsAloneAndTheRestCommitGapFree() async throws {
        try await withRoom { room in
            let outcomes = try await room.service.send([
                try room.send(room.writer, "ok-1"),
                try room.send(room.reader, "reader"),
                try room.send(room.writer, "someone-elses-file", file: 987_654_321),
                MessageSubmission(
                    roomID: 987_654_321, senderID: room.writer,
                    message: try NewMessage(content: "x", uid: "gone", fileId: nil)),
                try room.send(room.admin, "ok-2"),
            ])
            func code(_ outcome: SendOutcome) -> ParleyError.Code? {
                if case .failure(let error as ParleyError) = outcome { return error.code }
                return nil
            }
            #expect(outcomes.map(code) == [nil, .forbidden, .fileUnavailable, .notFound, nil])
            #expect(try outcomes[0].get().message.seq == 2)
            #expect(try outcomes[4].get().message.seq == 3)
            #expect(try await room.storedSeqs() == [1, 2, 3])
        }
    }

    @Test func aBatchWithoutFilesStoresItsNewMessagesAndAnswersItsRefusalsAndRetriesAlone() async throws {
        try await withRoom { room in
            let earlier = try await room.service.send([try room.send(room.writer, "earlier")])
            #expect(try earlier[0].get().message.seq == 2)
            let outcomes = try await room.service.send([
                try room.send(room.writer, "one"),
                try room.send(room.reader, "reader"),
                try room.send(room.writer, "earlier", "sent again"),
                MessageSubmission(
                    roomID: 987_654_321, senderID: room.writer,
                    message: try NewMessage(content: "x", uid: "gone", fileId: nil)),
                try room.send(room.admin, "two"),
                try room.send(room.writer, "one", "sent again"),
            ])
            func code(_ outcome: SendOutcome) -> ParleyError.Code? {
                if case .failure(let error as ParleyError) = outcome { return error.code }
                return nil
            }
            #expect(outcomes.map(code) == [nil, .forbidden, nil, .notFound, nil, nil])
            let answered = [0, 2, 4, 5].map { try? outcomes[$0].get() }
            #expect(answered.map { $0?.created } == [true, false, true, false])
            #expect(answered.map { $0?.message.seq } == [3, 2, 4, 3])
            #expect(answered[1]?.message.content == "hi")
            #expect(try await room.storedSeqs() == [1, 2, 3, 4])
        }
    }

    @Test func theOneStatementStoresABatchsNewMessagesInOrderAndLeavesTheRestToTheGeneralPath() async throws {
        try await withRoom { room in
            let repository = PostgresMessageRepository(
                database: room.harness.database, logger: .quiet, fileLinks: .testing)
            _ = try await room.service.send([try room.send(room.writer, "earlier")])
            let sent = try await repository.sendIfAllowed(
                batch: [
                    try room.send(room.writer, "one"), try room.send(room.reader, "reader"),
                    try room.send(room.writer, "earlier", "again"), try room.send(room.admin, "two"),
                    try room.send(room.writer, "one", "again"),
                ], minimum: .writer)
            #expect(sent.map { $0?.message.seq } == [3, nil, nil, 4, nil])
            #expect(sent.map { $0?.message.uid } == ["one", nil, nil, "two", nil])
            #expect(sent.map { $0?.created } == [true, nil, nil, true, nil])
            // A batch holding a file is left whole to the general path.
            let withFile = try await repository.sendIfAllowed(
                batch: [try room.send(room.writer, "three"), try room.send(room.writer, "file", file: 1)],
                minimum: .writer)
            #expect(withFile.map { $0 == nil } == [true, true])
            #expect(try await room.storedSeqs() == [1, 2, 3, 4])
        }
    }

    @Test func concurrentBatchesOverTwoRoomsInEitherOrderKeepEachRoomsSeqGapFree() async throws {
        try await withRoom { room in
            let other = try await room.client.decoded(
                RoomResponse.self, .post, "/v1/rooms", token: room.tokens[0],
                body: """
                    {"name":"Other","members":[{"userId":\(room.writer),"role":"writer"},\
                    {"userId":\(room.reader),"role":"reader"}],"firstMessage":{"content":"first","uid":"first"}}
                    """)
            func send(_ roomID: Int64, _ uid: String) throws -> MessageSubmission {
                MessageSubmission(
                    roomID: roomID, senderID: room.writer, message: try NewMessage(content: uid, uid: uid, fileId: nil))
            }
            try await withThrowingTaskGroup(of: [Bool].self) { group in
                for batch in 0..<20 {
                    group.addTask {
                        var sends = try (0..<3).flatMap {
                            [try send(room.id, "a-\(batch)-\($0)"), try send(other.id, "b-\(batch)-\($0)")]
                        }
                        if batch.isMultiple(of: 2) { sends.reverse() }
                        return try await room.service.send(sends).map { try $0.get().created }
                    }
                }
                for try await created in group { #expect(created == Array(repeating: true, count: 6)) }
            }
            #expect(try await room.storedSeqs() == Array(1...61))
            let otherSeqs = try await room.client.decoded(
                MessagesResponse.self, .get, "/v1/rooms/\(other.id)/messages?after=0&limit=200", token: room.tokens[0]
            ).messages.map(\.seq)
            #expect(otherSeqs == Array(1...61))
        }
    }

    @Test func restAndMQTTSendsOfOneUIDRacingStoreItOnceAndAllGetIt() async throws {
        try await withRoom { room in
            let submission = try room.send(room.writer, "race")
            let answers = try await withThrowingTaskGroup(of: SentMessage.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        if index.isMultiple(of: 2) {
                            // The REST send's path: the service's group commit.
                            let (message, created) = try await room.service.send(
                                roomID: room.id, message: submission.message, by: room.writer)
                            return SentMessage(message: message, created: created)
                        }
                        // The ingest's path: a lane's batch, here with another message beside it.
                        let batch = [try room.send(room.admin, "beside-\(index)"), submission]
                        return try await room.service.send(batch)[1].get()
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter(\.created).count == 1)
            #expect(Set(answers.map(\.message.id)).count == 1)
            #expect(try await room.storedSeqs() == Array(1...12))
        }
    }

    @Test func aRoomsSeqStaysGapFreeUnder200ConcurrentSendsAcrossRESTAndMQTT() async throws {
        try await withRoom { room in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    let sender = room.tokens[index.isMultiple(of: 2) ? 0 : 1]
                    group.addTask {
                        let answer = try await room.client.json(
                            .post, "/v1/rooms/\(room.id)/messages", token: sender,
                            body: #"{"content":"rest \#(index)","uid":"rest-\#(index)"}"#)
                        #expect(answer.status == .created)
                    }
                }
                for batch in 0..<20 {
                    group.addTask {
                        let sends = try (0..<5).map { try room.send(room.writer, "mqtt-\(batch)-\($0)") }
                        let outcomes = try await room.service.send(sends)
                        let created = try outcomes.map { try $0.get().created }
                        #expect(created == Array(repeating: true, count: 5))
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await room.storedSeqs() == Array(1...201))
        }
    }

    @Test func anIngestBatchRejectsItsBadMessagesAloneAndAnswersARetry() async throws {
        try await withRoom { room in
            let published = RecordingPublisher()
            let handler = IngestHandler(
                rooms: room.service,
                repository: PostgresRoomRepository(
                    database: room.harness.database, logger: .quiet, fileLinks: .testing),
                publisher: published,
                limiter: RedisRateLimiter(pool: room.harness.redis, namespace: room.harness.namespace),
                payloadLimit: 1024, logger: .quiet)
            func input(_ sender: Int64, _ data: String) -> ChatInput {
                ChatInput(
                    topic: "chat-in/\(room.uid)",
                    payload: Array(#"{"type":"new-message-notification","data":{\#(data)},"hash":"h"}"#.utf8),
                    sender: "\(sender)")
            }
            await handler.handle([
                input(room.writer, #""content":"a","uid":"a""#),
                input(room.reader, #""content":"r","uid":"r""#),
                input(room.writer, #""content":"\#(String(repeating: "x", count: 2000))","uid":"big""#),
                input(room.writer, #""content":"f","uid":"f","fileId":987654321"#),
                input(room.writer, #""content":"a","uid":"a""#),
                input(room.writer, #""content":"b","uid":"b""#),
                input(room.writer, #""content":"c","uid":"c","uid":"c2""#),
                input(room.writer, #""content":"n\u0000","uid":"n""#),
                ChatInput(
                    topic: "chat-in/\(room.uid)",
                    payload: Array(
                        #"{"type":"creating-message-info","data":{"creating":true,"time":"not a time"},"hash":"t0"}"#
                            .utf8), sender: "\(room.writer)"),
            ])
            let seqs = try await room.storedSeqs()
            #expect(seqs == [1, 2, 3])
            let events = published.events.withLock { $0 }
            func rejections(of user: Int64) -> [String] {
                events.filter { $0.topic == "messenger-notifications/\(user)" }.compactMap { event in
                    let rejection = try? JSONCoding.decoder.decode(
                        Envelope<RoomEvent.Rejection>.self, from: Data(event.payload.utf8))
                    return rejection?.data.code.rawValue
                }
            }
            #expect(rejections(of: room.reader) == ["forbidden"])
            #expect(
                rejections(of: room.writer).sorted() == [
                    "file-unavailable", "invalid-request", "invalid-request", "invalid-request", "too-large",
                ])
            // The repeat of "a" is answered with its canonical event, as stored (seq 2).
            let retried = events.filter { $0.topic == "chat-room/\(room.uid)" }
            #expect(retried.count == 1)
            #expect(retried.first?.payload.contains(#""seq":2"#) == true)
            // A notice after a message waits for the message: the retry's answer goes out first.
            let typing = ChatInput(
                topic: "chat-in/\(room.uid)",
                payload: Array(#"{"type":"creating-message-info","data":{"creating":true},"hash":"t"}"#.utf8),
                sender: "\(room.writer)")
            published.events.withLock { $0.removeAll() }
            await handler.handle([input(room.writer, #""content":"a","uid":"a""#), typing])
            let order = published.events.withLock { $0 }.compactMap { try? DomainEventContractTests.type($0.payload) }
            #expect(order == ["new-message-notification", "creating-message-info"])
        }
    }
}

/// Records what would go to the broker.
final class RecordingPublisher: EventPublisher {
    let events = Mutex<[(topic: String, payload: String)]>([])

    func publish(topic: String, payload: String) async throws {
        events.withLock { $0.append((topic, payload)) }
    }

    func publishTransient(topic: String, payload: String) async throws {
        try await publish(topic: topic, payload: payload)
    }
}
