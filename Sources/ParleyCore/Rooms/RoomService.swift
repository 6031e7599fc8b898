import Foundation
import ParleyRuntime

/// The room rules: who may see, write and administer, over the room repository.
///
/// A room the caller cannot read does not exist for them (`not-found`); a member without
/// the needed role gets `forbidden`.
public struct RoomService: Sendable {
    let rooms: any RoomRepository
    let messages: any MessageRepository
    /// Concurrent sends share transactions (see ``send(roomID:message:by:)``); none where the
    /// caller batches its own sends (the ingest, through ``send(_:)``).
    let sends: GroupCommit<MessageSubmission, SentMessage>?

    /// Whom an admin's add makes a member at once (``RoomAddPolicy``).
    let addPolicy: RoomAddPolicy
    /// The limits against abuse (``AbuseLimits``) and the buckets that count them.
    public var limits: AbuseLimits { budgets.limits }
    let budgets: MessageBudgets
    /// Asked about every batch of new messages before it is stored; nil: no hook.
    let hook: MessageHookGate?

    /// - Parameter bucketPatience: how long one ask of `buckets` may take before a batch goes
    ///   without its answer; nil: what a healthy Redis takes at worst.
    public init(
        rooms: any RoomRepository, messages: any MessageRepository, batching: SendBatching? = SendBatching(),
        addPolicy: RoomAddPolicy = .anyone, limits: AbuseLimits = AbuseLimits(), buckets: (any TokenBuckets)? = nil,
        hook: MessageHookGate? = nil, bots: BotRoster? = nil, bucketPatience: Duration? = nil
    ) {
        let budgets = MessageBudgets(
            limits: limits, buckets: buckets, bots: bots, patience: bucketPatience ?? BucketStoreGuard.defaultPatience)
        self.budgets = budgets
        self.rooms = rooms
        self.messages = messages
        self.addPolicy = addPolicy
        self.hook = hook
        self.sends = batching.map { batching in
            GroupCommit(
                lanes: batching.lanes, maxBatch: batching.maxBatch, window: batching.window,
                interval: batching.interval
            ) {
                [rooms, messages, hook] batch in
                try await Self.send(batch, budgets: budgets, rooms: rooms, messages: messages, hook: hook)
            }
        }
    }

    /// The caller's role, or `not-found` for a non-member; `forbidden` below `minimum`.
    @discardableResult
    public func require(_ minimum: RoomRole, roomID: Int64, userID: Int64) async throws -> RoomRole {
        try Self.allowed(try await rooms.role(roomID: roomID, userID: userID), minimum: minimum)
    }

    /// The one rule of room access: a non-member finds no room, a member below `minimum` is forbidden.
    static func allowed(_ role: RoomRole?, minimum: RoomRole) throws(ParleyError) -> RoomRole {
        guard let role else { throw ParleyError.notFound("No such room.") }
        guard role >= minimum else {
            throw ParleyError(.forbidden, "This needs the \(minimum.rawValue) role in the room.")
        }
        return role
    }

    public func room(id: Int64, for userID: Int64, latestMessages: Int = 0) async throws -> RoomView {
        guard var room = try await rooms.room(id: id, for: userID) else { throw ParleyError.notFound("No such room.") }
        if latestMessages > 0 {
            room.latestMessages =
                try await messages.latestMessages(roomIDs: [id], count: latestMessages, viewer: userID)[id] ?? []
        }
        return room
    }

    public func list(for userID: Int64, page: RoomPage, latestMessages: Int) async throws -> (
        rooms: [RoomView], nextCursor: String?
    ) {
        var (list, next) = try await rooms.rooms(for: userID, page: page)
        if latestMessages > 0 {
            let latest = try await messages.latestMessages(
                roomIDs: list.map(\.id), count: latestMessages, viewer: userID)
            for index in list.indices { list[index].latestMessages = latest[list[index].id] ?? [] }
        }
        return (list, next)
    }

    /// A multiparty room: at least two other distinct users, each with a role; the creator
    /// is admin.
    public func create(
        by creatorID: Int64, name: String, members: [(userID: Int64, role: RoomRole)], firstMessage: NewMessage?
    ) async throws -> RoomView {
        let name = try Self.roomName(name)
        guard members.count <= limits.membersPerRequest else {
            throw ParleyError.invalidRequest(
                "members lists more than \(limits.membersPerRequest) users", field: "members")
        }
        var roles: [Int64: RoomRole] = [:]
        for member in members where member.userID != creatorID {
            guard roles[member.userID] == nil else {
                throw ParleyError.invalidRequest("members lists a user twice", field: "members")
            }
            roles[member.userID] = member.role
        }
        guard roles.count >= 2 else {
            throw ParleyError.invalidRequest(
                "a multiparty room needs at least two other distinct users", field: "members")
        }
        // A new room has nothing to reply to, and only its members can be mentioned.
        guard firstMessage?.replyToId == nil else {
            throw ParleyError.invalidRequest("a new room has no message to reply to", field: "firstMessage.replyToId")
        }
        try await refuseBlocks(between: creatorID, and: Array(roles.keys))
        // The hook sees a new room's first message as of room 0: the room does not exist yet.
        var firstMessage = firstMessage
        if let hook, let message = firstMessage {
            firstMessage = try await hook.reviewed(
                MessageSubmission(roomID: 0, senderID: creatorID, message: message)
            ).message
        }
        try await spend("rooms", 1, of: .perHour(limits.roomsPerHour), by: creatorID)
        try await spend("members", roles.count, of: .perHour(limits.membersPerHour), by: creatorID)
        var invited: [Int64: RoomRole] = [:]
        for (userID, role) in roles where try await needsInvitation(userID, by: creatorID, roomID: nil) {
            invited[userID] = role
        }
        let members = roles.filter { invited[$0.key] == nil }
        guard (firstMessage?.mentions ?? []).allSatisfy({ members[$0] != nil || $0 == creatorID }) else {
            throw ParleyError.invalidRequest(
                "mentions names a user who is not a member", field: "firstMessage.mentions")
        }
        let id = try await rooms.createMultiparty(
            creatorID: creatorID, name: name, description: nil, members: members, firstMessage: firstMessage)
        for (userID, role) in invited.sorted(by: { $0.key < $1.key }) {
            _ = try await rooms.invite(roomID: id, inviteeID: userID, role: role, by: creatorID)
        }
        return try await room(id: id, for: creatorID)
    }

    public func direct(userID: Int64, peerID: Int64) async throws -> (room: RoomView, created: Bool) {
        guard peerID != userID else {
            throw ParleyError.invalidRequest("a two-party room needs another user", field: "userId")
        }
        // A blocked user cannot open the pair's room (the blocker can).
        if try await rooms.isBlocked(userID, by: peerID) { throw BlockService.refusal }
        let (id, created) = try await rooms.direct(userID: userID, peerID: peerID)
        return (try await room(id: id, for: userID), created)
    }

    /// An admin renames a multiparty room, sets its description (`.some(nil)` clears it), or both.
    public func change(roomID: Int64, name: String? = nil, description: String?? = nil, by userID: Int64) async throws
        -> RoomView
    {
        guard name != nil || description != nil else {
            throw ParleyError.invalidRequest("give name, description, or both", field: "name")
        }
        try await require(.admin, roomID: roomID, userID: userID)
        let current = try await room(id: roomID, for: userID)
        guard current.type == .multiparty else {
            throw ParleyError.invalidRequest("a two-party room has no name or description", field: "name")
        }
        let name = try name.map(Self.roomName)
        let description = try description.map { try $0.flatMap(Self.roomDescription) }
        if let name { try await rooms.rename(roomID: roomID, name: name, by: userID) }
        if let description { try await rooms.describe(roomID: roomID, description: description, by: userID) }
        return try await room(id: roomID, for: userID)
    }

    /// An admin makes the room read-only, or writable again; again is no change.
    public func setArchived(roomID: Int64, archived: Bool, by userID: Int64) async throws {
        try await require(.admin, roomID: roomID, userID: userID)
        _ = try await rooms.setArchived(roomID: roomID, archived: archived, by: userID)
    }

    /// A member hides a room (two-party rooms cannot be left) from their list until a new
    /// message arrives, or shows it again.
    public func setHidden(roomID: Int64, hidden: Bool, by userID: Int64) async throws {
        try await require(.reader, roomID: roomID, userID: userID)
        try await rooms.setHidden(roomID: roomID, userID: userID, hidden: hidden)
    }

    /// The one rule of writing besides the role, for sends, edits, reactions and typing alike:
    /// not in an archived room, not in a two-party room whose other user blocked the writer.
    static func requireWritable(_ rooms: any RoomRepository, roomID: Int64, userID: Int64) async throws {
        if let refusal = try await rooms.sendRefusals([RoomUser(roomID: roomID, userID: userID)]).values.first {
            throw refusal.error
        }
    }

    /// A writer who may write here now (``requireWritable(_:roomID:userID:)``): for typing.
    public func requireWriter(roomID: Int64, userID: Int64) async throws {
        try await require(.writer, roomID: roomID, userID: userID)
        try await Self.requireWritable(rooms, roomID: roomID, userID: userID)
    }

    static let archived = ParleyError(.roomArchived, "The room is archived: it can be read, not written.")

    /// Stores one message, in a transaction shared with the sends that arrive meanwhile
    /// (a group commit: the REST send's batching path), whose budgets are asked once for all.
    /// `budgeted`: the user's message budget applies (not to the app's server sending as its
    /// user, which spends its key's).
    public func send(roomID: Int64, message: NewMessage, by userID: Int64, budgeted: Bool = true) async throws -> (
        message: Message, created: Bool
    ) {
        let submission = MessageSubmission(
            roomID: roomID, senderID: userID, message: message, traceparent: PipelineTrace.current(),
            spendsBudget: budgeted)
        let sent =
            if let sends {
                try await sends.submit(submission, key: roomID)
            } else {
                try await Self.send([submission], budgets: budgets, rooms: rooms, messages: messages, hook: hook)[0]
                    .get()
            }
        return (sent.message, sent.created)
    }

    /// Stores a batch of sends: the writer check of all in one query, then one transaction
    /// (``MessageRepository/send(batch:)``). One outcome per send, in order; a send refused
    /// alone fails alone.
    public func send(_ batch: [MessageSubmission]) async throws -> [SendOutcome] {
        try await Self.send(batch, budgets: budgets, rooms: rooms, messages: messages, hook: hook)
    }

    /// A batch's budgets (``MessageBudgets``), then what they let go stored.
    static func send(
        _ batch: [MessageSubmission], budgets: MessageBudgets, rooms: any RoomRepository,
        messages: any MessageRepository, hook: MessageHookGate?
    ) async throws -> [SendOutcome] {
        var outcomes = try await budgets.refusals(batch, messages: messages)
        let allowed = batch.indices.filter { outcomes[$0] == nil }
        if !allowed.isEmpty {
            for (index, outcome) in zip(
                allowed, try await Self.send(allowed.map { batch[$0] }, rooms: rooms, messages: messages, hook: hook))
            {
                outcomes[index] = outcome
            }
        }
        return outcomes.map { $0 ?? .failure(ParleyError.notFound("No such room.")) }
    }

    static func send(
        _ batch: [MessageSubmission], rooms: any RoomRepository, messages: any MessageRepository
    ) async throws -> [SendOutcome] {
        // Nearly every send is a new message from a writer: the batch's are checked and stored
        // in one round trip. The rest (refusals, retries, files) are answered below.
        var stored: [SentMessage?]
        do {
            stored = try await messages.sendIfAllowed(batch: batch, minimum: .writer)
        } catch let error as any DependencyError where error.isUnavailability {
            throw error
        } catch {
            // Nothing was stored: the general path answers every send, failing each alone.
            stored = Array(repeating: nil, count: batch.count)
        }
        let rest = stored.indices.filter { stored[$0] == nil }
        var outcomes = stored.map { $0.map { SendOutcome.success($0) } }
        if !rest.isEmpty {
            let answered: [SendOutcome]
            do {
                answered = try await checkAndStore(rest.map { batch[$0] }, rooms: rooms, messages: messages)
            } catch let error as any DependencyError where error.isUnavailability && rest.count < batch.count {
                // The stored sends stay answered as stored; only the rest failed.
                answered = rest.map { _ in .failure(error) }
            }
            for (index, outcome) in zip(rest, answered) { outcomes[index] = outcome }
        }
        return outcomes.map { $0 ?? .failure(ParleyError.notFound("No such room.")) }
    }

    /// The general path: the writer check of all (and of the users they mention) in one
    /// query, the replies' targets in another, then one transaction.
    private static func checkAndStore(
        _ batch: [MessageSubmission], rooms: any RoomRepository, messages: any MessageRepository
    ) async throws -> [SendOutcome] {
        let mentioned = batch.flatMap { submission in
            submission.message.mentions.map { RoomUser(roomID: submission.roomID, userID: $0) }
        }
        let roles = try await rooms.roles(of: Set(batch.map(\.member) + mentioned))
        let replyIDs = Set(batch.compactMap(\.message.replyToId))
        let targets = replyIDs.isEmpty ? [:] : try await messages.replyTargets(ids: replyIDs)
        var outcomes: [SendOutcome?] = batch.map { submission in
            do {
                _ = try Self.allowed(roles[submission.member], minimum: .writer)
                return nil
            } catch {
                return .failure(error)
            }
        }
        let writers = Set(batch.indices.filter { outcomes[$0] == nil }.map { batch[$0].member })
        let refusals = writers.isEmpty ? [:] : try await rooms.sendRefusals(writers)
        let mentionPairs = Set(
            batch.flatMap { submission in
                submission.message.mentions.filter { $0 != submission.senderID }.map {
                    UserPair(submission.senderID, $0)
                }
            })
        let blocked = mentionPairs.isEmpty ? [] : try await rooms.blockedPairs(mentionPairs)
        // An archive, a block, or a reply or mention that no longer fits (the target deleted, a
        // user gone) refuses a new message, not a retry of one stored before: that is
        // answered as stored.
        var unfit: [Int: any Error] = [:]
        for index in batch.indices where outcomes[index] == nil {
            do {
                if let refusal = refusals[batch[index].member] { throw refusal.error }
                try Self.checkReferences(of: batch[index], roles: roles, targets: targets)
                let sender = batch[index].senderID
                if batch[index].message.mentions.contains(where: { blocked.contains(UserPair(sender, $0)) }) {
                    throw Self.mentionBlocked
                }
            } catch {
                unfit[index] = error
            }
        }
        if !unfit.isEmpty {
            let stored = try await messages.storedKeys(Set(unfit.keys.map { batch[$0].key }))
            for (index, error) in unfit where !stored.contains(batch[index].key) { outcomes[index] = .failure(error) }
        }
        let allowed = outcomes.indices.filter { outcomes[$0] == nil }
        if !allowed.isEmpty {
            let stored = try await messages.send(batch: allowed.map { batch[$0] })
            for (index, outcome) in zip(allowed, stored) { outcomes[index] = outcome }
        }
        return outcomes.map { $0 ?? .failure(ParleyError.notFound("No such room.")) }
    }

    /// A reply answers a message of its room that is not deleted; a mention names a reader.
    static func checkReferences(
        of submission: MessageSubmission, roles: [RoomUser: RoomRole], targets: [Int64: ReplyTarget]
    ) throws {
        if let replyTo = submission.message.replyToId {
            guard let target = targets[replyTo], target.roomID == submission.roomID, !target.deleted else {
                throw ParleyError.invalidRequest(
                    "replyToId must name a message of this room that is not deleted", field: "replyToId")
            }
        }
        for user in submission.message.mentions where roles[RoomUser(roomID: submission.roomID, userID: user)] == nil {
            throw ParleyError.invalidRequest("mentions names a user who cannot read the room", field: "mentions")
        }
    }

    /// A mention of someone who blocked the sender, or whom the sender blocked.
    static let mentionBlocked = ParleyError(.blocked, "A block between you and a user you mention refuses the mention.")

    public func history(roomID: Int64, query: HistoryQuery, for userID: Int64) async throws -> (
        messages: [Message], hasMore: Bool
    ) {
        try await require(.reader, roomID: roomID, userID: userID)
        return try await messages.messages(roomID: roomID, query: query, viewer: userID)
    }

    @discardableResult
    public func markRead(roomID: Int64, target: ReadMarker.Target, by userID: Int64) async throws -> ReadMarker {
        try await require(.reader, roomID: roomID, userID: userID)
        return try await messages.markRead(roomID: roomID, userID: userID, target: target)
    }

    /// Two-party rooms keep their pair: their membership cannot be edited.
    public func requireAdminOfMultiparty(roomID: Int64, userID: Int64) async throws {
        try await require(.admin, roomID: roomID, userID: userID)
        guard try await rooms.room(id: roomID, for: userID)?.type == .multiparty else {
            throw ParleyError(.forbidden, "The members of a two-party room cannot change.")
        }
    }

    static func roomName(_ name: String) throws -> String {
        try TextRule.validated(name.trimmingCharacters(in: .whitespacesAndNewlines), field: "name", length: 1...200)
    }

    /// An empty description is no description.
    static func roomDescription(_ text: String) throws -> String? {
        text.isEmpty ? nil : try TextRule.validated(text, field: "description", length: 1...500)
    }
}
