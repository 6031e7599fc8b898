import Foundation
import ParleyCore
import Synchronization
import Testing

/// The rules of message actions over in-memory ports: who may edit, delete and react, the
/// edit window, and reference checks on sends, in milliseconds without PostgreSQL.
struct MessageActionServiceTests {
    let rooms = InMemoryRooms()
    let actions = InMemoryMessageActions()
    static let admin: Int64 = 1
    static let writer: Int64 = 2
    static let reader: Int64 = 3
    static let stranger: Int64 = 4
    static let sentAt = Date(timeIntervalSince1970: 1_800_000_000)

    func service(window: Duration = .zero, now: Date = sentAt) -> MessageActionService {
        MessageActionService(rooms: rooms, actions: actions, editWindow: window, now: { now })
    }

    /// A room of an admin, a writer and a reader, and a message of `sender` in it.
    func roomWithMessage(by sender: Int64 = writer) async throws -> (room: Int64, message: Int64) {
        let room = try await RoomService(rooms: rooms, messages: rooms).create(
            by: Self.admin, name: "R", members: [(Self.writer, .writer), (Self.reader, .reader)],
            firstMessage: NewMessage(content: "hi", uid: "0", fileId: nil)
        ).id
        let message = actions.add(room: room, sender: sender, at: Self.sentAt)
        return (room, message)
    }

    @Test func onlyTheSenderStillAWriterEditsWithinTheWindow() async throws {
        let (room, message) = try await roomWithMessage()
        for (user, code) in [
            (Self.admin, ParleyError.Code.forbidden), (Self.reader, .forbidden), (Self.stranger, .notFound),
        ] {
            let error = await #expect(throws: ParleyError.self) {
                try await service().edit(roomID: room, messageID: message, content: "x", mentions: nil, by: user)
            }
            #expect(error?.code == code)
        }
        let window = Duration.seconds(60)
        let late = await #expect(throws: ParleyError.self) {
            try await service(window: window, now: Self.sentAt + 61).edit(
                roomID: room, messageID: message, content: "x", mentions: nil, by: Self.writer)
        }
        #expect(late?.code == .editWindowPassed)
        _ = try await service(window: window, now: Self.sentAt + 59).edit(
            roomID: room, messageID: message, content: "in time", mentions: nil, by: Self.writer)
        #expect(actions.content(of: message) == "in time")
        // Without a window, any time.
        _ = try await service(now: Self.sentAt + 86_400 * 365).edit(
            roomID: room, messageID: message, content: "a year on", mentions: nil, by: Self.writer)
        #expect(actions.content(of: message) == "a year on")

        // The same text again is no edit; demoted to reader, the sender edits no more.
        let edits = actions.editCount
        _ = try await service().edit(
            roomID: room, messageID: message, content: "a year on", mentions: nil, by: Self.writer)
        #expect(actions.editCount == edits)
        try await rooms.setDirectMember(roomID: room, userID: Self.writer, role: .reader, by: Self.admin)
        let demoted = await #expect(throws: ParleyError.self) {
            try await service().edit(roomID: room, messageID: message, content: "y", mentions: nil, by: Self.writer)
        }
        #expect(demoted?.code == .forbidden)
    }

    @Test func editsCheckContentMentionsAndTombstones() async throws {
        let (room, message) = try await roomWithMessage()
        let empty = await #expect(throws: ParleyError.self) {
            try await service().edit(roomID: room, messageID: message, content: "", mentions: nil, by: Self.writer)
        }
        #expect(empty?.field == "content")
        let stranger = await #expect(throws: ParleyError.self) {
            try await service().edit(
                roomID: room, messageID: message, content: "@x", mentions: [Self.stranger], by: Self.writer)
        }
        #expect(stranger?.field == "mentions")
        _ = try await service().edit(
            roomID: room, messageID: message, content: "@r", mentions: [Self.reader, Self.reader], by: Self.writer)
        #expect(actions.mentions(of: message) == [Self.reader])

        try await service().delete(roomID: room, messageID: message, by: Self.writer)
        let deleted = await #expect(throws: ParleyError.self) {
            try await service().edit(roomID: room, messageID: message, content: "z", mentions: nil, by: Self.writer)
        }
        #expect(deleted?.code == .messageDeleted)
    }

    @Test func theSenderOrAnAdminDeletesOnceAndNobodyElse() async throws {
        let (room, mine) = try await roomWithMessage()
        let adminsOwn = actions.add(room: room, sender: Self.admin, at: Self.sentAt)
        let refused = await #expect(throws: ParleyError.self) {
            try await service().delete(roomID: room, messageID: adminsOwn, by: Self.writer)
        }
        #expect(refused?.code == .forbidden)
        let hidden = await #expect(throws: ParleyError.self) {
            try await service().delete(roomID: room, messageID: mine, by: Self.stranger)
        }
        #expect(hidden?.code == .notFound)
        try await service().delete(roomID: room, messageID: mine, by: Self.admin)
        try await service().delete(roomID: room, messageID: mine, by: Self.admin)
        #expect(actions.deleteCount == 1)

        // A sender demoted to reader deletes their messages no more.
        let later = actions.add(room: room, sender: Self.writer, at: Self.sentAt)
        try await rooms.setDirectMember(roomID: room, userID: Self.writer, role: .reader, by: Self.admin)
        let demoted = await #expect(throws: ParleyError.self) {
            try await service().delete(roomID: room, messageID: later, by: Self.writer)
        }
        #expect(demoted?.code == .forbidden)
        let elsewhere = await #expect(throws: ParleyError.self) {
            try await service().delete(roomID: room + 1, messageID: later, by: Self.admin)
        }
        #expect(elsewhere?.code == .notFound)
    }

    @Test func writersReactReadersOnlyTakeTheirsBackAndTheRepositorysAnswersMapToCodes() async throws {
        let (room, message) = try await roomWithMessage()
        let reader = await #expect(throws: ParleyError.self) {
            try await service().react(roomID: room, messageID: message, key: ":ok:", by: Self.reader)
        }
        #expect(reader?.code == .forbidden)
        try await service().unreact(roomID: room, messageID: message, key: ":ok:", by: Self.reader)
        let badKey = await #expect(throws: ParleyError.self) {
            try await service().react(roomID: room, messageID: message, key: "ok", by: Self.writer)
        }
        #expect(badKey?.field == "key")
        for (answer, code) in [
            (ReactionResult.tooManyKeys, ParleyError.Code.tooManyReactions), (.messageDeleted, .messageDeleted),
            (.noSuchMessage, .notFound),
        ] {
            actions.answerReactionsWith(answer)
            let error = await #expect(throws: ParleyError.self) {
                try await service().react(roomID: room, messageID: message, key: "👍", by: Self.writer)
            }
            #expect(error?.code == code)
        }
    }

    @Test func aSendsReplyAndMentionsMustFitItsRoom() async throws {
        let service = RoomService(rooms: rooms, messages: rooms)
        let room = try await RoomService(rooms: rooms, messages: rooms).create(
            by: Self.admin, name: "R", members: [(Self.writer, .writer), (Self.reader, .reader)],
            firstMessage: NewMessage(content: "hi", uid: "0", fileId: nil)
        ).id
        let other = try await RoomService(rooms: rooms, messages: rooms).create(
            by: Self.admin, name: "S", members: [(Self.writer, .writer), (Self.reader, .reader)],
            firstMessage: NewMessage(content: "there", uid: "0", fileId: nil)
        ).id
        let target = try await service.history(roomID: room, query: HistoryQuery(), for: Self.admin).messages[0]
        let elsewhere = try await service.history(roomID: other, query: HistoryQuery(), for: Self.admin).messages[0]
        let send = { (uid: String, replyTo: Int64?, mentions: [Int64]) in
            MessageSubmission(
                roomID: room, senderID: Self.writer,
                message: try NewMessage(content: "m", uid: uid, fileId: nil, replyToId: replyTo, mentions: mentions))
        }
        let outcomes = try await service.send([
            try send("a", target.id, [Self.reader]), try send("b", elsewhere.id, []),
            try send("c", nil, [Self.stranger]),
            try send("d", 999, []),
        ])
        #expect(try outcomes[0].get().message.mentions == [Self.reader])
        #expect(try outcomes[0].get().message.replyTo?.id == target.id)
        for (index, field) in [(1, "replyToId"), (2, "mentions"), (3, "replyToId")] {
            #expect((outcomes[index].failure as? ParleyError)?.field == field)
        }
        // More than 50 distinct users is refused before anything is looked up.
        #expect(throws: ParleyError.self) {
            try NewMessage(content: "m", uid: "e", fileId: nil, mentions: Array(1...51))
        }
        #expect(try NewMessage(content: "m", uid: "e", fileId: nil, mentions: Array(1...50) + [1]).mentions.count == 50)
        let first = await #expect(throws: ParleyError.self) {
            try await service.create(
                by: Self.admin, name: "T", members: [(Self.writer, .writer), (Self.reader, .reader)],
                firstMessage: try NewMessage(content: "m", uid: "0", fileId: nil, replyToId: target.id))
        }
        #expect(first?.field == "firstMessage.replyToId")
    }

    @Test func reactionKeysAreOneEmojiOrAShortcode() throws {
        for key in ["👍", "👍🏽", "❤️", "👨‍👩‍👧", "🇨🇿", "1️⃣", ":ok:", ":+1:", ":a_b-c:", ":\(String(repeating: "z", count: 32)):"] {
            #expect(try ReactionKey.validated(key) == key, "\(key)")
        }
        for key in [
            "", "a", "1", "#", "ok", ":OK:", "::", ":a", "👍👍", "👍 ", ":\(String(repeating: "z", count: 33)):", "é",
        ] {
            #expect(throws: ParleyError.self, "\(key)") { try ReactionKey.validated(key) }
        }
    }

    @Test func levelMentionsPushesOnlyTheMentionedAndNoneNobody() throws {
        let policy = PushPolicy()
        let now = Self.sentAt
        #expect(policy.allows(room: RoomNotificationSettings(), quietHours: nil, at: now))
        #expect(!policy.allows(room: RoomNotificationSettings(level: .mentions), quietHours: nil, at: now))
        #expect(
            policy.allows(room: RoomNotificationSettings(level: .mentions), quietHours: nil, at: now, mentioned: true))
        #expect(!policy.allows(room: RoomNotificationSettings(level: .none), quietHours: nil, at: now, mentioned: true))
        // A mute is level none until it ends, whatever the level.
        let muted = RoomNotificationSettings(level: .all, mutedUntil: now + 60)
        #expect(!policy.allows(room: muted, quietHours: nil, at: now, mentioned: true))
        #expect(policy.allows(room: muted, quietHours: nil, at: now + 61, mentioned: true))
        // Quiet hours still hold for a mention, unless the room passes them.
        let always = try QuietHours(start: 0, end: 1439, timeZone: TimeZone(identifier: "UTC")!)
        let mentions = RoomNotificationSettings(level: .mentions)
        let quiet = Date(timeIntervalSince1970: 3600)
        #expect(!policy.allows(room: mentions, quietHours: always, at: quiet, mentioned: true))
        let passing = RoomNotificationSettings(level: .mentions, overridesQuietHours: true)
        #expect(policy.allows(room: passing, quietHours: always, at: quiet, mentioned: true))
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Messages' facts, edits, tombstones and reactions in memory (the rules' view of them).
final class InMemoryMessageActions: MessageActionRepository, Sendable {
    struct Row {
        var facts: MessageFacts
        var edits = 0
    }
    private let state = Mutex<(rows: [Int64: Row], next: Int64, deletes: Int, reaction: ReactionResult)>(
        ([:], 1000, 0, .changed(count: 1)))

    func add(room: Int64, sender: Int64, at: Date) -> Int64 {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.rows[id] = Row(
                facts: MessageFacts(
                    id: id, roomID: room, seq: id, senderID: sender, createdAt: at, content: "text", fileID: nil,
                    mentions: [], deleted: false))
            return id
        }
    }

    func content(of id: Int64) -> String? { state.withLock { $0.rows[id]?.facts.content } }
    func mentions(of id: Int64) -> [Int64]? { state.withLock { $0.rows[id]?.facts.mentions } }
    var editCount: Int { state.withLock { $0.rows.values.reduce(0) { $0 + $1.edits } } }
    var deleteCount: Int { state.withLock { $0.deletes } }
    func answerReactionsWith(_ result: ReactionResult) { state.withLock { $0.reaction = result } }

    func facts(messageID: Int64, roomID: Int64) async throws -> MessageFacts? {
        state.withLock { state in state.rows[messageID].map(\.facts).flatMap { $0.roomID == roomID ? $0 : nil } }
    }

    func message(id: Int64, roomID: Int64, viewer: Int64) async throws -> Message? {
        guard let facts = try await facts(messageID: id, roomID: roomID) else { return nil }
        return Message(
            id: id, seq: facts.seq, chatRoomId: roomID, chatRoomUid: "room", sentById: facts.senderID,
            content: facts.content, uid: "\(id)", fileId: nil, createdAt: facts.createdAt, mentions: facts.mentions)
    }

    func edit(messageID: Int64, roomID: Int64, content: String, mentions: [Int64]?, metadata: MessageMetadata??)
        async throws -> Bool
    {
        state.withLock { state in
            guard var row = state.rows[messageID], !row.facts.deleted else { return false }
            let facts = row.facts
            row.facts = MessageFacts(
                id: facts.id, roomID: facts.roomID, seq: facts.seq, senderID: facts.senderID,
                createdAt: facts.createdAt, content: content, fileID: facts.fileID,
                mentions: mentions ?? facts.mentions, deleted: false)
            row.edits += 1
            state.rows[messageID] = row
            return true
        }
    }

    func delete(messageIDs: [Int64], roomID: Int64, by userID: Int64) async throws {
        state.withLock { state in
            for messageID in messageIDs {
                guard let facts = state.rows[messageID]?.facts, facts.roomID == roomID, !facts.deleted else { continue }
                state.rows[messageID]?.facts = MessageFacts(
                    id: facts.id, roomID: facts.roomID, seq: facts.seq, senderID: facts.senderID,
                    createdAt: facts.createdAt, content: "", fileID: nil, mentions: [], deleted: true)
                state.deletes += 1
            }
        }
    }

    func setReaction(
        messageID: Int64, roomID: Int64, key: String, userID: Int64, add: Bool, maximumKeys: Int
    ) async throws -> ReactionResult {
        state.withLock { $0.reaction }
    }

    func reactors(messageID: Int64, key: String, after: Int64?, limit: Int) async throws -> [User] { [] }

    func replies(roomID: Int64, messageID: Int64, after: Int64?, limit: Int, viewer: Int64) async throws
        -> [Message]
    { [] }

    func changes(roomID: Int64, since: Date, after cursor: ChangeCursor?, limit: Int, viewer: Int64) async throws
        -> [(message: Message, cursor: ChangeCursor)]
    { [] }
}

struct DeletedBeforeRelayTests {
    @Test func aMessageDeletedBeforeTheRelayReadItPushesNobody() {
        let sent = Message(
            id: 1, seq: 1, chatRoomId: 2, chatRoomUid: "room", sentById: 3, content: "hi", uid: "u", fileId: nil,
            createdAt: Date(), mentions: [4])
        #expect(FanoutJob.newMessage(sent).push?.mentions == [4])
        let tombstone = Message(
            id: 1, seq: 1, chatRoomId: 2, chatRoomUid: "room", sentById: 3, content: "", uid: "u", fileId: nil,
            createdAt: Date(), deletedAt: Date(), deletedById: 3)
        #expect(FanoutJob.newMessage(tombstone).push == nil)
    }
}

/// Blocks over the in-memory rooms: the blocked cannot open or write in the pair's room.
struct BlockRulesTests {
    let rooms = InMemoryRooms()

    @Test func aBlockedUserCannotOpenOrWriteInTheirDirectRoomAndNobodyBlocksThemselves() async throws {
        let service = RoomService(rooms: rooms, messages: rooms)
        let room = try await service.direct(userID: 1, peerID: 2).room.id
        await rooms.block(2, by: 1)
        let open = await #expect(throws: ParleyError.self) { try await service.direct(userID: 2, peerID: 1) }
        #expect(open?.code == .blocked)
        #expect(try await service.direct(userID: 1, peerID: 2).created == false)
        let outcomes = try await service.send([
            MessageSubmission(roomID: room, senderID: 2, message: try NewMessage(content: "hi", uid: "a", fileId: nil)),
            MessageSubmission(roomID: room, senderID: 1, message: try NewMessage(content: "hi", uid: "b", fileId: nil)),
        ])
        #expect((outcomes[0].failure as? ParleyError)?.code == .blocked)
        #expect(try outcomes[1].get().created)

        let blocks = BlockService(blocks: NoBlocks())
        let myself = await #expect(throws: ParleyError.self) { try await blocks.block(1, by: 1) }
        #expect(myself?.field == "userId")
    }
}

/// Stores nothing: for the rules that answer before the repository is asked.
struct NoBlocks: BlockRepository {
    func block(_ blockedID: Int64, by blockerID: Int64) async throws {}
    func unblock(_ blockedID: Int64, by blockerID: Int64) async throws {}
    func blocked(by blockerID: Int64, after: Int64?, limit: Int) async throws -> [User] { [] }
}
