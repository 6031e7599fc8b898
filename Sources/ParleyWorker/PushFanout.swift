import Foundation
import ParleyCore
import ParleyRuntime

/// The fan-out's push step: one `push` job per device of each recipient who should be
/// pushed now (not the actor, not one who blocked the actor, not a muted room, not in quiet
/// hours unless the room passes).
///
/// A whole fan-out batch asks for its recipients once and for its rooms' names once, however
/// many rooms and events it holds; users found without a push token are not asked again
/// until a token is registered somewhere, so a room where nobody has one asks nothing. A
/// repeated batch queues its pushes again; every push of a room carries the room as its
/// collapse id, so a device shows the duplicate in place of the first.
///
/// A read's silent updates are coalesced per user and room (``readUpdates``, a service the
/// process runs): the first goes at once, then at most one every `readInterval`, the last read
/// always told, with the badge as it stands when it goes.
public struct PushFanout: Sendable {
    let audience: any PushAudience
    let queue: any JobQueue
    let composer: PushComposer
    /// Who had no token when last asked: they are not asked again until a token is added.
    let tokenless: TokenlessUsers
    /// How far each user read each room, waiting for its silent update.
    public let readUpdates: Coalescer<RoomUser>

    public init(
        audience: any PushAudience, queue: any JobQueue, composer: PushComposer = PushComposer(),
        tokenlessCapacity: Int = 1_000_000, readInterval: Duration = .seconds(10),
        onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.audience = audience
        self.queue = queue
        self.composer = composer
        self.tokenless = TokenlessUsers(capacity: tokenlessCapacity)
        readUpdates = Coalescer(interval: readInterval, onFailure: onFailure) { due in
            try await Self.queueReadUpdates(due, audience: audience, queue: queue, composer: composer)
        }
    }

    /// Each user's devices with a push token get the room read up to the value and their badge.
    static func queueReadUpdates(
        _ due: [(key: RoomUser, value: Int64)], audience: any PushAudience, queue: any JobQueue,
        composer: PushComposer
    ) async throws {
        var rooms: [Int64: Set<Int64>] = [:]
        for (reader, _) in due { rooms[reader.roomID, default: []].insert(reader.userID) }
        let recipients = try await audience.recipients(in: rooms)
        guard !recipients.isEmpty else { return }
        let contexts = try await audience.contexts(of: Set(due.map(\.key)))
        var jobs: [PushJob] = []
        for (reader, seq) in due {
            guard let context = contexts[reader] else { continue }
            let devices = (recipients[reader.roomID] ?? []).filter { $0.userID == reader.userID }
            jobs += composer.readJobs(roomID: reader.roomID, roomUID: context.roomUID, seq: seq, devices: devices)
        }
        guard !jobs.isEmpty else { return }
        try await queue.enqueue(contentsOf: jobs.map { $0.json() })
    }

    /// The pushes one event owes to some users of its room.
    struct Request: Sendable {
        let intent: PushIntent
        let roomID: Int64
        let users: [Int64]
        /// The push tokens' version of the event's job (``ParleyCore/FanoutJob/pushTokensVersion``).
        var tokensVersion: Int64?
        /// The fan-out's span of the event's message: each push job continues it.
        var traceparent: String? = nil
    }

    /// Who of `users` an event by `intent`'s actor may push: never the actor, nobody known to
    /// have had no token at `tokensVersion` or later.
    func candidates(of intent: PushIntent, among users: [Int64], tokensVersion: Int64?) -> [Int64] {
        possibleHolders(users.filter { $0 != intent.actorID }, tokensVersion: tokensVersion)
    }

    private func possibleHolders(_ users: [Int64], tokensVersion: Int64?) -> [Int64] {
        guard let tokensVersion else { return users }
        return tokenless.possibleHolders(among: users, at: tokensVersion)
    }

    func queuePushes(_ requests: [Request], at now: Date = Date()) async throws {
        // Reads wait for their silent update; only the reader's own devices hear of them.
        for request in requests where request.intent.reason == .read {
            guard let seq = request.intent.seq else { continue }
            let readers = request.users.filter { $0 == request.intent.actorID }
            for reader in possibleHolders(readers, tokensVersion: request.tokensVersion) {
                readUpdates.submit(RoomUser(roomID: request.roomID, userID: reader), seq)
            }
        }
        let requests = requests.filter { $0.intent.reason != .read }.map { request in
            Request(
                intent: request.intent, roomID: request.roomID,
                users: candidates(of: request.intent, among: request.users, tokensVersion: request.tokensVersion),
                tokensVersion: request.tokensVersion, traceparent: request.traceparent)
        }.filter { !$0.users.isEmpty }
        guard !requests.isEmpty else { return }
        var rooms: [Int64: Set<Int64>] = [:]
        for request in requests { rooms[request.roomID, default: []].formUnion(request.users) }
        let recipients = try await audience.recipients(in: rooms)
        for request in requests {
            guard let version = request.tokensVersion else { continue }
            tokenless.record(
                asked: Set(request.users), holders: Set((recipients[request.roomID] ?? []).map(\.userID)), at: version)
        }
        // Most members of most rooms have no device to push to: then nothing more is asked.
        guard !recipients.isEmpty else { return }
        let named = Set(
            requests.filter { recipients[$0.roomID] != nil }.map {
                RoomUser(roomID: $0.roomID, userID: $0.intent.actorID)
            })
        let contexts = try await audience.contexts(of: named)
        let blocks = try await audience.blocks(
            among: Set(
                requests.flatMap { request in
                    (recipients[request.roomID] ?? []).map {
                        UserBlock(blockerID: $0.userID, blockedID: request.intent.actorID)
                    }
                }))
        var jobs: [PushJob] = []
        for request in requests {
            // A room deleted since the event has nobody left to tell.
            guard let devices = recipients[request.roomID],
                let context = contexts[RoomUser(roomID: request.roomID, userID: request.intent.actorID)]
            else { continue }
            // Nor does one who blocked the actor hear from them.
            let users = Set(request.users).filter {
                !blocks.contains(UserBlock(blockerID: $0, blockedID: request.intent.actorID))
            }
            jobs += composer.jobs(
                for: request.intent, roomID: request.roomID, context: context,
                recipients: devices.filter { users.contains($0.userID) }, at: now, traceparent: request.traceparent)
        }
        guard !jobs.isEmpty else { return }
        try await queue.enqueue(contentsOf: jobs.map { $0.json() })
    }
}
