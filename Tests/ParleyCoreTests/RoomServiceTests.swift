import Foundation
import ParleyCore
import Testing

/// The room rules over an in-memory repository: who may see, write and administer, and how
/// a batch of sends is answered, in milliseconds without PostgreSQL.
struct RoomServiceTests {
    let rooms = InMemoryRooms()
    var service: RoomService { RoomService(rooms: rooms, messages: rooms) }
    static let admin: Int64 = 1
    static let writer: Int64 = 2
    /// For budgets kept by a fake that answers at once: on a loaded test run a pause longer
    /// than the default patience let every send of a batch go, as if Redis were away.
    static let fakePatience = Duration.seconds(30)
    static let reader: Int64 = 3
    static let stranger: Int64 = 4

    func multiparty() async throws -> Int64 {
        try await service.create(
            by: Self.admin, name: "  Crew ", members: [(Self.writer, .writer), (Self.reader, .reader)],
            firstMessage: NewMessage(content: "hi", uid: "0", fileId: nil)
        ).id
    }

    @Test func aRoomOneCannotReadDoesNotExistAndTooLowARoleIsForbidden() async throws {
        let room = try await multiparty()
        let hidden = await #expect(throws: ParleyError.self) { try await service.room(id: room, for: Self.stranger) }
        #expect(hidden?.code == .notFound)
        let history = await #expect(throws: ParleyError.self) {
            try await service.history(roomID: room, query: HistoryQuery(), for: Self.stranger)
        }
        #expect(history?.code == .notFound)
        let rename = await #expect(throws: ParleyError.self) {
            try await service.change(roomID: room, name: "Mine", by: Self.writer)
        }
        #expect(rename?.code == .forbidden)
        #expect(try await service.change(roomID: room, name: " Ours ", by: Self.admin).name == "Ours")
    }

    @Test func underTheInvitePolicyStrangersAreInvitedAndRoomMatesAdded() async throws {
        let room = try await multiparty()
        let invite = RoomService(rooms: rooms, messages: rooms, addPolicy: .invite)
        // The stranger shares no room with the admin: an invitation, no membership.
        guard
            case .invited(let invitation) = try await invite.setMember(
                roomID: room, memberID: Self.stranger, role: .writer, by: Self.admin)
        else {
            Issue.record("a stranger was added at once")
            return
        }
        #expect(try await rooms.role(roomID: room, userID: Self.stranger) == nil)
        #expect(try await invite.invitations(for: Self.stranger, after: nil, limit: 10) == [invitation])
        // A room-mate of the adder (in another room) is added at once.
        let other = try await invite.create(
            by: Self.admin, name: "Other", members: [(Self.writer, .writer), (Self.reader, .reader)], firstMessage: nil)
        guard
            case .member = try await invite.setMember(
                roomID: other.id, memberID: Self.writer, role: .reader, by: Self.admin)
        else {
            Issue.record("a room-mate was invited")
            return
        }
        // Accepted: a member with the invitation's role.
        _ = try await invite.accept(invitationID: invitation.id, by: Self.stranger)
        #expect(try await rooms.role(roomID: room, userID: Self.stranger) == .writer)
        // Under `anyone`, only someone who left is invited.
        #expect(try await service.removeMember(roomID: room, memberID: Self.reader, by: Self.reader) == ())
        guard
            case .invited = try await service.setMember(
                roomID: room, memberID: Self.reader, role: .reader, by: Self.admin)
        else {
            Issue.record("someone who left was added back")
            return
        }
    }

    @Test func aBlockEitherWayRefusesAddsAndMentions() async throws {
        let room = try await multiparty()
        await rooms.block(Self.admin, by: Self.stranger)
        let add = await #expect(throws: ParleyError.self) {
            try await service.setMember(roomID: room, memberID: Self.stranger, role: .reader, by: Self.admin)
        }
        #expect(add?.code == .blocked)
        await rooms.block(Self.writer, by: Self.reader)
        let mention = try await service.send(
            [
                MessageSubmission(
                    roomID: room, senderID: Self.writer,
                    message: NewMessage(content: "hi", uid: "b-1", fileId: nil, mentions: [Self.reader]))
            ])
        #expect((mention.first?.failureError as? ParleyError)?.code == .blocked)
    }

    @Test func aBudgetStoreThatDoesNotAnswerHoldsOneSendBrieflyAndTheNextOnesNotAtAll() async throws {
        let room = try await multiparty()
        let store = HangingBuckets()
        let limited = RoomService(rooms: rooms, messages: rooms, batching: nil, buckets: store)
        let before = await rooms.messageCount(room)
        let clock = ContinuousClock()
        var waits: [Duration] = []
        for index in 0..<3 {
            let started = clock.now
            _ = try await limited.send(
                roomID: room, message: try NewMessage(content: "m", uid: "h-\(index)", fileId: nil), by: Self.writer)
            waits.append(clock.now - started)
        }
        // The first waits out the guard's patience, then goes; the store is not asked again.
        #expect(waits[0] >= .milliseconds(200) && waits[0] < .seconds(5))
        #expect(waits[1] < .milliseconds(200) && waits[2] < .milliseconds(200))
        #expect(await store.asks == 1)
        #expect(await rooms.messageCount(room) == before + 3)
    }

    @Test func chatInBeyondASendersBudgetIsRefusedWithItsWait() async throws {
        let room = try await multiparty()
        let limited = RoomService(
            rooms: rooms, messages: rooms, limits: AbuseLimits(messages: RateBucket(perSecond: 1, burst: 2)),
            buckets: CountingBuckets(), bucketPatience: Self.fakePatience)
        let batch = try (0..<4).map { index in
            MessageSubmission(
                roomID: room, senderID: index == 3 ? Self.admin : Self.writer,
                message: try NewMessage(content: "m", uid: "l-\(index)", fileId: nil))
        }
        let outcomes = try await limited.send(batch)
        #expect(outcomes.map { $0.failureError == nil } == [true, true, false, true])
        let refusal = outcomes[2].failureError as? ParleyError
        #expect(refusal?.code == .rateLimited && refusal?.retryAfter == 1)
        #expect(await rooms.messageCount(room) == 4)
    }

    /// A bot (the roster says which senders are) spends a budget of its own, in a batch and
    /// alone; a user beside it spends theirs.
    @Test func aBotSpendsItsOwnMessageBudget() async throws {
        let room = try await multiparty()
        let limited = RoomService(
            rooms: rooms, messages: rooms, batching: nil,
            limits: AbuseLimits(
                messages: RateBucket(perSecond: 1, burst: 1), botMessages: RateBucket(perSecond: 1, burst: 3)),
            buckets: CountingBuckets(), bots: BotRoster { [Self.writer] }, bucketPatience: Self.fakePatience)
        let batch = try [Self.writer, Self.writer, Self.admin, Self.admin, Self.writer].enumerated().map {
            index, sender in
            MessageSubmission(
                roomID: room, senderID: sender, message: try NewMessage(content: "m", uid: "bot-\(index)", fileId: nil))
        }
        let outcomes = try await limited.send(batch)
        #expect(outcomes.map { $0.failureError == nil } == [true, true, true, false, true])
        await #expect(throws: ParleyError.self) {
            try await limited.send(
                roomID: room, message: try NewMessage(content: "m", uid: "bot-5", fileId: nil), by: Self.writer)
        }
    }

    /// A client that sends again with the same uid (its PUBACK or answer was lost) gets the
    /// stored message, not a refusal for the budget its first send spent.
    @Test func aRetryOfAStoredMessageIsAnsweredAsStoredPastTheBudget() async throws {
        let room = try await multiparty()
        let limited = RoomService(
            rooms: rooms, messages: rooms, batching: nil,
            limits: AbuseLimits(messages: RateBucket(perSecond: 1, burst: 1)),
            buckets: CountingBuckets(), bucketPatience: Self.fakePatience)
        let message = try NewMessage(content: "m", uid: "retry-1", fileId: nil)
        let first = try await limited.send(roomID: room, message: message, by: Self.writer)
        let again = try await limited.send(roomID: room, message: message, by: Self.writer)
        #expect(first.created && !again.created && again.message.id == first.message.id)
        await #expect(throws: ParleyError.self) {
            try await limited.send(
                roomID: room, message: try NewMessage(content: "m", uid: "retry-2", fileId: nil), by: Self.writer)
        }
        let batch = try ["retry-1", "retry-3"].map { uid in
            MessageSubmission(
                roomID: room, senderID: Self.writer, message: try NewMessage(content: "m", uid: uid, fileId: nil))
        }
        let outcomes = try await limited.send(batch)
        #expect(outcomes.map { $0.failureError == nil } == [true, false])
    }

    @Test func aMultipartyRoomNeedsTwoOtherDistinctMembers() async throws {
        for members: [(userID: Int64, role: RoomRole)] in [
            [(Self.writer, .writer)], [(Self.writer, .writer), (Self.writer, .reader)],
            [(Self.admin, .admin), (Self.writer, .writer)],
        ] {
            let error = await #expect(throws: ParleyError.self) {
                try await service.create(
                    by: Self.admin, name: "R", members: members,
                    firstMessage: NewMessage(content: "x", uid: "0", fileId: nil))
            }
            #expect(error?.field == "members")
        }
        #expect(await rooms.roomCount == 0)
    }

    @Test func aTwoPartyRoomCannotBeLeftOrEditedAndOneCannotTalkToOneself() async throws {
        let (room, created) = try await service.direct(userID: Self.admin, peerID: Self.writer)
        #expect(created)
        let leave = await #expect(throws: ParleyError.self) {
            try await service.removeMember(roomID: room.id, memberID: Self.admin, by: Self.admin)
        }
        #expect(leave?.code == .forbidden)
        let add = await #expect(throws: ParleyError.self) {
            try await service.setMember(roomID: room.id, memberID: Self.reader, role: .reader, by: Self.admin)
        }
        #expect(add?.code == .forbidden)
        let alone = await #expect(throws: ParleyError.self) { try await service.direct(userID: 1, peerID: 1) }
        #expect(alone?.field == "userId")
        #expect(try await service.direct(userID: Self.writer, peerID: Self.admin).created == false)
    }

    @Test func aBatchOfSendsIsAnsweredSendBySendWithRefusalsAlone() async throws {
        let room = try await multiparty()
        let message = { (uid: String) in try NewMessage(content: "m", uid: uid, fileId: nil) }
        let outcomes = try await service.send([
            MessageSubmission(roomID: room, senderID: Self.writer, message: try message("a")),
            MessageSubmission(roomID: room, senderID: Self.reader, message: try message("b")),
            MessageSubmission(roomID: room, senderID: Self.stranger, message: try message("c")),
            MessageSubmission(roomID: room, senderID: Self.admin, message: try message("d")),
        ])
        #expect(outcomes.map { (try? $0.get())?.message.seq } == [2, nil, nil, 3])
        #expect(outcomes.map { ($0.failureError as? ParleyError)?.code } == [nil, .forbidden, .notFound, nil])
        // One send alone takes the one-round-trip path; a retry answers the stored message.
        let first = try await service.send(roomID: room, message: try message("e"), by: Self.writer)
        let again = try await service.send(roomID: room, message: try message("e"), by: Self.writer)
        #expect(first.created && !again.created)
        #expect(first.message.id == again.message.id)
        let refused = await #expect(throws: ParleyError.self) {
            try await service.send(roomID: room, message: try message("f"), by: Self.reader)
        }
        #expect(refused?.code == .forbidden)
        #expect(await rooms.messageCount(room) == 4)
    }

    @Test func aBatchPartlyStoredWhenTheDatabaseGoesAwayAnswersItsStoredSendsAsStored() async throws {
        let room = try await multiparty()
        let message = { (uid: String) in try NewMessage(content: "m", uid: uid, fileId: nil) }
        await rooms.setUnavailable(true)
        let outcomes = try await service.send([
            MessageSubmission(roomID: room, senderID: Self.writer, message: try message("a")),
            MessageSubmission(roomID: room, senderID: Self.reader, message: try message("b")),
        ])
        #expect((try? outcomes[0].get())?.created == true)
        #expect((outcomes[1].failureError as? Unreachable)?.isUnavailability == true)
        // Nothing stored: the unavailability is the whole batch's.
        await #expect(throws: Unreachable.self) {
            try await service.send([MessageSubmission(roomID: room, senderID: Self.reader, message: try message("c"))])
        }
    }
}

/// A dependency that stopped answering.
struct Unreachable: DependencyError {
    var isUnavailability: Bool { true }
}

extension Result {
    var failureError: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Rooms, direct memberships and messages in memory, with the repository's contract: seq
/// gap-free per room, one message per (room, sender, uid).
actor InMemoryRooms: RoomRepository, MessageRepository {
    struct Stored {
        let id: Int64
        let uid: String
        let kind: RoomView.Kind
        var name: String?
        var description: String?
        var members: [Int64: RoomRole]
        var messages: [Message] = []
    }
    var stored: [Int64: Stored] = [:]
    private var blocks = Set<UserBlock>()
    private var archived = Set<Int64>()
    private var nextMessageID: Int64 = 1
    /// The general path's role check throws ``Unreachable`` (the one-statement path still stores).
    private var unavailable = false

    func setUnavailable(_ value: Bool) { unavailable = value }

    var roomCount: Int { stored.count }
    func messageCount(_ roomID: Int64) -> Int { stored[roomID]?.messages.count ?? 0 }

    func role(roomID: Int64, userID: Int64) async throws -> RoomRole? { stored[roomID]?.members[userID] }
    func roles(of members: Set<RoomUser>) async throws -> [RoomUser: RoomRole] {
        if unavailable { throw Unreachable() }
        var roles: [RoomUser: RoomRole] = [:]
        for member in members { roles[member] = stored[member.roomID]?.members[member.userID] }
        return roles
    }
    func role(roomUID: String, userID: Int64) async throws -> RoomRole? {
        stored.values.first { $0.uid == roomUID }?.members[userID]
    }
    func roomID(uid: String) async throws -> Int64? { stored.values.first { $0.uid == uid }?.id }

    func roomType(id: Int64) async throws -> RoomView.Kind? { stored[id]?.kind }

    func room(id: Int64, for userID: Int64) async throws -> RoomView? {
        guard let room = stored[id], let role = room.members[userID] else { return nil }
        return RoomView(
            id: id, uid: room.uid, type: room.kind, name: room.name, description: room.description,
            archived: archived.contains(id), createdAt: Date(),
            lastMessageAt: room.messages.last?.createdAt, myRole: role, lastSeq: room.messages.last?.seq ?? 0,
            lastReadMessageId: nil, unreadCount: 0)
    }

    func rooms(for userID: Int64, page: RoomPage) async throws -> (rooms: [RoomView], nextCursor: String?) {
        var views: [RoomView] = []
        for id in stored.keys.sorted() { if let view = try await room(id: id, for: userID) { views.append(view) } }
        return (views, nil)
    }

    func latestMessages(roomIDs: [Int64], count: Int, viewer: Int64) async throws -> [Int64: [Message]] {
        Dictionary(uniqueKeysWithValues: roomIDs.map { ($0, Array(stored[$0]?.messages.suffix(count) ?? [])) })
    }

    func createMultiparty(
        creatorID: Int64?, name: String, description: String?, members: [Int64: RoomRole], firstMessage: NewMessage?
    ) async throws -> Int64 {
        let creator = creatorID.map { [$0: RoomRole.admin] } ?? [:]
        let id = newRoom(.multiparty, name: name, members: members.merging(creator) { $1 })
        stored[id]?.description = description
        if let creatorID, let firstMessage {
            _ = store(MessageSubmission(roomID: id, senderID: creatorID, message: firstMessage))
        }
        return id
    }

    func direct(userID: Int64, peerID: Int64) async throws -> (roomID: Int64, created: Bool) {
        let pair: [Int64: RoomRole] = [userID: .writer, peerID: .writer]
        if let existing = stored.values.first(where: { $0.kind == .twoparty && $0.members == pair }) {
            return (existing.id, false)
        }
        return (newRoom(.twoparty, name: nil, members: pair), true)
    }

    func rename(roomID: Int64, name: String, by userID: Int64) async throws { stored[roomID]?.name = name }

    func members(roomID: Int64, after: Int64?, limit: Int) async throws -> [Member] { [] }
    func member(roomID: Int64, userID: Int64) async throws -> Member? {
        guard let role = stored[roomID]?.members[userID] else { return nil }
        return Member(
            user: User(
                id: userID, email: "\(userID)@example.com", firstName: "U", lastName: "\(userID)", isAdmin: false,
                createdAt: Date()),
            role: role, via: ["direct"])
    }
    func setDirectMember(roomID: Int64, userID: Int64, role: RoomRole, by editorID: Int64) async throws {
        stored[roomID]?.members[userID] = role
        departures.remove(RoomUser(roomID: roomID, userID: userID))
    }
    func removeDirectMember(roomID: Int64, userID: Int64, by editorID: Int64) async throws -> Bool {
        stored[roomID]?.members.removeValue(forKey: userID) != nil
    }
    func leave(roomID: Int64, userID: Int64) async throws -> Bool {
        guard stored[roomID]?.members.removeValue(forKey: userID) != nil else { return false }
        departures.insert(RoomUser(roomID: roomID, userID: userID))
        return true
    }

    private var departures = Set<RoomUser>()
    private(set) var pending: [Int64: (invitation: Invitation, invitee: Int64, role: RoomRole)] = [:]

    func blockedPairs(_ pairs: Set<UserPair>) async throws -> Set<UserPair> {
        pairs.filter {
            blocks.contains(UserBlock(blockerID: $0.userID, blockedID: $0.otherID))
                || blocks.contains(UserBlock(blockerID: $0.otherID, blockedID: $0.userID))
        }
    }
    func shareRoom(_ userID: Int64, _ otherID: Int64) async throws -> Bool {
        stored.values.contains { $0.members[userID] != nil && $0.members[otherID] != nil }
    }
    func hasLeft(roomID: Int64, userID: Int64) async throws -> Bool {
        departures.contains(RoomUser(roomID: roomID, userID: userID))
    }
    func invite(roomID: Int64, inviteeID: Int64, role: RoomRole, by inviterID: Int64) async throws -> Invitation {
        if let existing = pending.values.first(where: { $0.invitee == inviteeID && $0.invitation.room.id == roomID }) {
            return existing.invitation
        }
        let invitation = Invitation(
            id: Int64(pending.count + 1),
            room: Invitation.Room(id: roomID, name: stored[roomID]?.name ?? "", type: .multiparty),
            inviter: Invitation.Inviter(id: inviterID, firstName: "U", lastName: "\(inviterID)"), createdAt: Date())
        pending[invitation.id] = (invitation, inviteeID, role)
        return invitation
    }
    func invitations(for userID: Int64, after: Int64?, limit: Int) async throws -> [Invitation] {
        pending.values.filter { $0.invitee == userID && $0.invitation.id > (after ?? 0) }.map(\.invitation)
            .sorted { $0.id < $1.id }.prefix(limit).map { $0 }
    }
    func accept(invitationID: Int64, by userID: Int64) async throws -> Int64? {
        guard let found = pending[invitationID], found.invitee == userID else { return nil }
        pending[invitationID] = nil
        let roomID = found.invitation.room.id
        departures.remove(RoomUser(roomID: roomID, userID: userID))
        stored[roomID]?.members[userID] = found.role
        return roomID
    }
    func decline(invitationID: Int64, by userID: Int64) async throws -> Bool {
        guard let found = pending[invitationID], found.invitee == userID else { return false }
        pending[invitationID] = nil
        return true
    }
    func setGroup(roomID: Int64, groupID: Int64, role: RoomRole?, required: Bool, by editorID: Int64) async throws
        -> Bool
    { false }
    func setAppRole(roomID: Int64, appRoleID: Int64, role: RoomRole?, required: Bool, by editorID: Int64)
        async throws -> Bool
    { false }

    func send(batch: [MessageSubmission]) async throws -> [SendOutcome] { batch.map { store($0) } }

    func sendIfAllowed(batch: [MessageSubmission], minimum: RoomRole) async throws -> [SentMessage?] {
        guard batch.allSatisfy(\.message.isPlain) else { return batch.map { _ in nil } }
        return try batch.map { submission in
            guard let role = stored[submission.roomID]?.members[submission.senderID], role >= minimum,
                !isStored(submission), !isBlockedSender(submission.member), !archived.contains(submission.roomID)
            else { return nil }
            return try store(submission).get()
        }
    }

    func messages(roomID: Int64, query: HistoryQuery, viewer: Int64?) async throws -> (
        messages: [Message], hasMore: Bool
    ) {
        (stored[roomID]?.messages ?? [], false)
    }

    func block(_ userID: Int64, by blockerID: Int64) {
        blocks.insert(UserBlock(blockerID: blockerID, blockedID: userID))
    }

    func isBlocked(_ userID: Int64, by blockerID: Int64) async throws -> Bool {
        blocks.contains(UserBlock(blockerID: blockerID, blockedID: userID))
    }

    func sendRefusals(_ members: Set<RoomUser>) async throws -> [RoomUser: SendRefusal] {
        var refusals: [RoomUser: SendRefusal] = [:]
        for member in members {
            if archived.contains(member.roomID) {
                refusals[member] = .archived
            } else if isBlockedSender(member) {
                refusals[member] = .blocked
            }
        }
        return refusals
    }

    func setArchived(roomID: Int64, archived value: Bool, by userID: Int64) async throws -> Bool {
        value ? archived.insert(roomID).inserted : archived.remove(roomID) != nil
    }

    func setHidden(roomID: Int64, userID: Int64, hidden: Bool) async throws {}

    func describe(roomID: Int64, description: String?, by userID: Int64) async throws {
        stored[roomID]?.description = description
    }

    private func isBlockedSender(_ member: RoomUser) -> Bool {
        guard let room = stored[member.roomID], room.kind == .twoparty else { return false }
        return room.members.keys.contains { blocks.contains(UserBlock(blockerID: $0, blockedID: member.userID)) }
    }

    func storedKeys(_ keys: Set<MessageKey>) async throws -> Set<MessageKey> {
        keys.filter { key in
            stored[key.roomID]?.messages.contains { $0.sentById == key.senderID && $0.uid == key.uid } ?? false
        }
    }

    func replyTargets(ids: Set<Int64>) async throws -> [Int64: ReplyTarget] {
        var targets: [Int64: ReplyTarget] = [:]
        for room in stored.values {
            for message in room.messages where ids.contains(message.id) {
                targets[message.id] = ReplyTarget(roomID: room.id, deleted: message.deletedAt != nil)
            }
        }
        return targets
    }

    func markRead(roomID: Int64, userID: Int64, target: ReadMarker.Target) async throws -> ReadMarker {
        throw ParleyError.notFound()
    }

    private func newRoom(_ kind: RoomView.Kind, name: String?, members: [Int64: RoomRole]) -> Int64 {
        let id = Int64(stored.count + 1)
        stored[id] = Stored(
            id: id, uid: "room-\(id)-" + String(repeating: "x", count: 16), kind: kind, name: name, members: members)
        return id
    }

    private func isStored(_ submission: MessageSubmission) -> Bool {
        stored[submission.roomID]?.messages.contains {
            $0.sentById == submission.senderID && $0.uid == submission.message.uid
        } ?? false
    }

    private func store(_ submission: MessageSubmission) -> SendOutcome {
        guard let room = stored[submission.roomID] else { return .failure(ParleyError.notFound("No such room.")) }
        if let existing = room.messages.first(where: {
            $0.sentById == submission.senderID && $0.uid == submission.message.uid
        }) {
            return .success(SentMessage(message: existing, created: false))
        }
        let message = Message(
            id: nextMessageID, seq: (room.messages.last?.seq ?? 0) + 1, chatRoomId: room.id, chatRoomUid: room.uid,
            sentById: submission.senderID, content: submission.message.content, uid: submission.message.uid,
            fileId: submission.message.fileId, createdAt: Date(),
            replyTo: submission.message.replyToId.map {
                ReplyPreview(id: $0, seq: 0, sentById: nil, excerpt: "", deleted: false)
            }, mentions: submission.message.mentions)
        nextMessageID += 1
        stored[submission.roomID]?.messages.append(message)
        return .success(SentMessage(message: message, created: true))
    }
}

/// Buckets that never refill: each key holds the bucket's burst, then nothing.
actor CountingBuckets: TokenBuckets {
    private var spent: [String: Int] = [:]

    func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance] {
        var allowances: [String: Allowance] = [:]
        for (key, count) in counts {
            let allowed = min(count, bucket.burst - spent[key, default: 0])
            spent[key, default: 0] += allowed
            allowances[key] = Allowance(allowed: allowed, retryAfter: Int((1 / bucket.perSecond).rounded(.up)))
        }
        return allowances
    }
}

/// A store that never answers (Redis behind a partition).
actor HangingBuckets: TokenBuckets {
    private(set) var asks = 0

    func take(_ counts: [String: Int], from bucket: RateBucket) async throws -> [String: Allowance] {
        asks += 1
        try await Task.sleep(for: .seconds(30))
        return [:]
    }
}
