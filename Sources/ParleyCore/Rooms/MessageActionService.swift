import Foundation

/// The rules of edits, deletions, reactions, threads and the `changedSince` sync (see
/// <doc:MessageActions>).
///
/// As everywhere in rooms, a room the caller cannot read does not exist for them, and a
/// message of another room is no message of this one (`not-found`).
public struct MessageActionService: Sendable {
    let rooms: any RoomRepository
    let actions: any MessageActionRepository
    /// How long after sending a message may be edited; zero: always.
    let editWindow: Duration
    /// Asked about every edit before it is stored; nil: no hook.
    let hook: MessageHookGate?
    let now: @Sendable () -> Date

    /// Distinct reaction keys one message may carry.
    public static let maximumReactionKeys = 20

    public init(
        rooms: any RoomRepository, actions: any MessageActionRepository, editWindow: Duration = .zero,
        hook: MessageHookGate? = nil, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.rooms = rooms
        self.actions = actions
        self.editWindow = editWindow
        self.hook = hook
        self.now = now
    }

    /// The sender, still a writer, replaces the content (and the mentions and metadata, when
    /// given: `metadata` `.some(nil)` clears it).
    public func edit(
        roomID: Int64, messageID: Int64, content: String, mentions: [Int64]?, metadata: MessageMetadata?? = .none,
        by userID: Int64
    ) async throws -> Message {
        try await require(.writer, roomID: roomID, userID: userID)
        try await RoomService.requireWritable(rooms, roomID: roomID, userID: userID)
        let facts = try await facts(messageID: messageID, roomID: roomID)
        guard facts.senderID == userID else {
            throw ParleyError(.forbidden, "Only the sender may edit a message.")
        }
        guard !facts.deleted else { throw Self.deleted }
        if editWindow > .zero, Duration.seconds(now().timeIntervalSince(facts.createdAt)) > editWindow {
            throw ParleyError(
                .editWindowPassed, "Messages may be edited for \(editWindow.components.seconds) seconds after sending.")
        }
        try MessageText.check(content, hasFile: facts.fileID != nil, field: "content")
        var (content, metadata) = (content, metadata)
        if let hook {
            let current = try await message(messageID, roomID: roomID, viewer: userID)
            (content, metadata) = try await hook.review(edit: content, metadata: metadata, of: current, by: userID)
            do {
                try MessageText.check(content, hasFile: facts.fileID != nil, field: "content")
            } catch {
                throw MessageHookGate.rejection("The message hook's replacement is not a valid message.")
            }
        }
        var named: [Int64]?
        if let mentions {
            named = try await readers(named: mentions, roomID: roomID)
            let pairs = Set((named ?? []).filter { $0 != userID }.map { UserPair(userID, $0) })
            if !pairs.isEmpty, try await !rooms.blockedPairs(pairs).isEmpty { throw RoomService.mentionBlocked }
        }
        let mentions = named
        if content != facts.content || (mentions != nil && mentions != facts.mentions) || metadata != nil {
            guard
                try await actions.edit(
                    messageID: messageID, roomID: roomID, content: content, mentions: mentions, metadata: metadata)
            else { throw Self.deleted }
        }
        return try await message(messageID, roomID: roomID, viewer: userID)
    }

    /// The sender (still a writer) or a room admin turns the message into a tombstone; a
    /// tombstone stays one.
    public func delete(roomID: Int64, messageID: Int64, by userID: Int64) async throws {
        let role = try await require(.reader, roomID: roomID, userID: userID)
        let facts = try await facts(messageID: messageID, roomID: roomID)
        guard role >= .admin || (facts.senderID == userID && role >= .writer) else {
            throw ParleyError(.forbidden, "Only the sender or a room admin may delete a message.")
        }
        guard !facts.deleted else { return }
        try await actions.delete(messageID: messageID, roomID: roomID, by: userID)
    }

    /// Writers react; adding a reaction one has is no change.
    public func react(roomID: Int64, messageID: Int64, key: String, by userID: Int64) async throws {
        let key = try ReactionKey.validated(key)
        try await require(.writer, roomID: roomID, userID: userID)
        try await RoomService.requireWritable(rooms, roomID: roomID, userID: userID)
        try Self.check(
            try await actions.setReaction(
                messageID: messageID, roomID: roomID, key: key, userID: userID, add: true,
                maximumKeys: Self.maximumReactionKeys))
    }

    /// Removes the caller's own reaction (a member whose role fell to reader may still).
    public func unreact(roomID: Int64, messageID: Int64, key: String, by userID: Int64) async throws {
        let key = try ReactionKey.validated(key)
        try await require(.reader, roomID: roomID, userID: userID)
        try await RoomService.requireWritable(rooms, roomID: roomID, userID: userID)
        try Self.check(
            try await actions.setReaction(
                messageID: messageID, roomID: roomID, key: key, userID: userID, add: false,
                maximumKeys: Self.maximumReactionKeys))
    }

    static func check(_ result: ReactionResult) throws {
        switch result {
        case .changed, .unchanged: return
        case .tooManyKeys:
            throw ParleyError(.tooManyReactions, "A message has at most \(maximumReactionKeys) different reactions.")
        case .messageDeleted: throw Self.deleted
        case .noSuchMessage: throw Self.noSuchMessage
        }
    }

    /// Who reacted with `key`, for readers.
    public func reactors(roomID: Int64, messageID: Int64, key: String, for userID: Int64, after: Int64?, limit: Int)
        async throws -> [User]
    {
        let key = try ReactionKey.validated(key)
        try await require(.reader, roomID: roomID, userID: userID)
        _ = try await facts(messageID: messageID, roomID: roomID)
        return try await actions.reactors(messageID: messageID, key: key, after: after, limit: limit)
    }

    /// A message's thread, ascending by `seq`.
    public func replies(roomID: Int64, messageID: Int64, for userID: Int64, after: Int64?, limit: Int) async throws
        -> (messages: [Message], hasMore: Bool)
    {
        try await require(.reader, roomID: roomID, userID: userID)
        _ = try await facts(messageID: messageID, roomID: roomID)
        let page = try await actions.replies(
            roomID: roomID, messageID: messageID, after: after, limit: limit, viewer: userID)
        return (Array(page.prefix(limit)), page.count > limit)
    }

    /// Messages that changed at or after `since`, in the order they changed.
    public func changes(roomID: Int64, since: Date, after cursor: ChangeCursor?, limit: Int, for userID: Int64)
        async throws -> (messages: [Message], next: ChangeCursor?)
    {
        try await require(.reader, roomID: roomID, userID: userID)
        let page = try await actions.changes(
            roomID: roomID, since: since, after: cursor, limit: limit + 1, viewer: userID)
        let shown = page.prefix(limit)
        let next = page.count > limit ? shown.last?.cursor : nil
        return (shown.map(\.message), next)
    }

    /// A message as `userID` sees it (`me` in its reactions); for a send that found its uid
    /// stored, whose message may have gathered reactions since.
    public func message(_ id: Int64, roomID: Int64, for userID: Int64) async throws -> Message {
        try await message(id, roomID: roomID, viewer: userID)
    }

    /// The distinct users of `ids`, each of whom must be able to read the room.
    func readers(named ids: [Int64], roomID: Int64) async throws -> [Int64] {
        let ids = try MessageText.mentions(ids, field: "mentions")
        guard !ids.isEmpty else { return [] }
        let roles = try await rooms.roles(of: Set(ids.map { RoomUser(roomID: roomID, userID: $0) }))
        guard roles.count == ids.count else {
            throw ParleyError.invalidRequest("mentions names a user who cannot read the room", field: "mentions")
        }
        return ids
    }

    @discardableResult
    private func require(_ minimum: RoomRole, roomID: Int64, userID: Int64) async throws -> RoomRole {
        try RoomService.allowed(try await rooms.role(roomID: roomID, userID: userID), minimum: minimum)
    }

    private func facts(messageID: Int64, roomID: Int64) async throws -> MessageFacts {
        guard let facts = try await actions.facts(messageID: messageID, roomID: roomID) else {
            throw Self.noSuchMessage
        }
        return facts
    }

    private func message(_ id: Int64, roomID: Int64, viewer: Int64) async throws -> Message {
        guard let message = try await actions.message(id: id, roomID: roomID, viewer: viewer) else {
            throw Self.noSuchMessage
        }
        return message
    }

    static let noSuchMessage = ParleyError(.notFound, "No such message in this room.", field: "messageId")
    static let deleted = ParleyError(.messageDeleted, "The message is deleted.")
}
