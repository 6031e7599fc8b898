import Foundation
import Logging
import ParleyCore
import Synchronization

/// The `ingest` role: client input from `chat-in/{roomUid}`, stored before anything reaches
/// other members (persist before forward).
///
/// The sender is what the broker vouches for (``ParleyCore/ChatInSender``): the user id
/// Parley's plugin stamped on the message (`parley-user`), or the topic's `{userId}` level
/// that the broker's ACL lets only that user write; never a field of the payload. New messages go through the same service as the REST send;
/// anything invalid is answered with `message-rejected` on the sender's notification topic.
public struct IngestHandler: Sendable {
    let rooms: RoomService
    let repository: any RoomRepository
    let publisher: any EventPublisher
    let limiter: any RateLimiter
    /// Larger payloads are answered with `too-large` (64 KiB by default).
    let payloadLimit: Int
    let logger: Logger
    /// What vouches for a message's sender.
    let senders: ChatInSender
    /// Who wrote lately, when REST reads may use PostgreSQL replicas: a sender's own reads then
    /// go to the primary for a while. Nil: no replicas.
    let writers: (any RecentWriters)?
    /// Where `delivered-message-notification`s go; nil: they are refused as unknown.
    let receipts: ReceiptService?
    /// Whose typing is relayed; nil: everyone's.
    let privacy: PrivacyService?
    /// Room ids by uid: a uid never changes rooms, so every message need not look it up.
    let roomIDs = RoomIDCache(capacity: 10_000)

    public init(
        rooms: RoomService, repository: any RoomRepository, publisher: any EventPublisher, limiter: any RateLimiter,
        payloadLimit: Int = 64 * 1024, senders: ChatInSender = .plugin, writers: (any RecentWriters)? = nil,
        receipts: ReceiptService? = nil, privacy: PrivacyService? = nil, logger: Logger
    ) {
        self.receipts = receipts
        self.privacy = privacy
        self.senders = senders
        self.writers = writers
        self.rooms = rooms
        self.repository = repository
        self.publisher = publisher
        self.limiter = limiter
        self.payloadLimit = payloadLimit
        self.logger = logger
    }

    /// Handles a lane's batch in arrival order: consecutive new messages are stored together
    /// in one transaction (a group commit); a read marker or typing notice first stores the
    /// messages before it, so a room's events keep the order they arrived in.
    public func handle(_ batch: [ChatInput]) async {
        var sends: [PendingSend] = []
        var wrote = Set<Int64>()
        for input in batch {
            let topic = Topic.chatIn(parsing: input.topic)
            let sender: Int64
            switch senders.sender(of: input, topicSender: topic?.sender) {
            case .sender(let vouched): sender = vouched
            case .unknown:
                logger.warning(
                    "chat-in message without a vouched sender dropped", metadata: ["topic": "\(input.topic)"])
                continue
            case .mismatched(let stamped):
                await reject(
                    sender: stamped, roomID: nil, uid: nil, hash: nil,
                    Rejection(.forbidden, "The topic names another sender."))
                continue
            }
            guard let uid = topic?.uid else {
                // The ACL lets nothing else through; a uid the ACL would refuse names no room.
                await reject(
                    sender: sender, roomID: nil, uid: nil, hash: nil, Rejection(.forbidden, "No such room."))
                continue
            }
            var roomID: Int64?
            var envelope: ClientEnvelope?
            do {
                // The room first: every rejection after this names it, whatever the payload.
                guard let room = try await lookUpRoom(uid: uid) else { throw Rejection(.forbidden, "No such room.") }
                roomID = room
                guard input.payload.count <= payloadLimit else {
                    throw Rejection(.tooLarge, "The payload exceeds \(payloadLimit) bytes.")
                }
                try StrictJSON.check(input.payload)
                guard let decoded = ClientEnvelope.decode(input.payload) else {
                    throw Rejection(.invalidRequest, "The payload is not a {type, data, hash} envelope.")
                }
                envelope = decoded
                guard (decoded.hash?.count ?? 0) <= 128 else {
                    throw Rejection(.invalidRequest, "hash must be at most 128 characters.")
                }
                guard decoded.data.chatRoomId == nil || decoded.data.chatRoomId == room else {
                    throw Rejection(.invalidRequest, "chatRoomId does not match the topic's room.")
                }
                if let decodedMessage = decoded.message {
                    let message = try decodedMessage.get()
                    // Each message is a trace of its own, from here to its pushes.
                    let span = PipelineTrace.startTrace("chat-in", kind: .consumer)
                    span?.set("messaging.destination.name", input.topic)
                    wrote.insert(sender)
                    sends.append(
                        PendingSend(
                            submission: MessageSubmission(
                                roomID: room, senderID: sender, message: message, traceparent: span?.traceparent),
                            hash: decoded.hash, span: span))
                } else {
                    if !sends.isEmpty {
                        await store(sends)
                        sends = []
                    }
                    try await handleNotice(decoded, roomID: room, uid: uid, sender: sender)
                }
            } catch {
                // A payload refused before it decoded still names its message when it can.
                let salvaged = envelope == nil ? ClientEnvelope.salvage(input.payload) : nil
                await reject(
                    sender: sender, roomID: roomID, uid: envelope?.data.uid ?? salvaged?.uid,
                    hash: envelope?.hash ?? salvaged?.hash, rejection(for: error))
            }
        }
        if !sends.isEmpty { await store(sends) }
        // After the writes too (messages were marked before theirs, read markers before each).
        await mark(wrote)
    }

    /// Stores the batch's new messages in one transaction; a retry is answered with the
    /// canonical event (the outbox sent it once), a refused message alone with `message-rejected`.
    private func store(_ sends: [PendingSend]) async {
        // Before the commit too: the canonical event, and a read after it, may come at once.
        await mark(Set(sends.map(\.submission.senderID)))
        let outcomes: [SendOutcome]
        do {
            outcomes = try await rooms.send(sends.map(\.submission))
        } catch {
            outcomes = Array(repeating: .failure(error), count: sends.count)
        }
        var retries: [(topic: String, payload: String, send: PendingSend)] = []
        for (send, outcome) in zip(sends, outcomes) {
            send.span?.set("parley.batch.sends", sends.count)
            send.span?.end(failing: outcome.failure)
            switch outcome {
            case .success(let sent):
                if !sent.created {
                    retries.append(
                        (Topic.room(sent.message.chatRoomUid), RoomEvent.newMessage(sent.message).json(), send))
                }
            case .failure(let error):
                await reject(send, rejection(for: error))
            }
        }
        guard !retries.isEmpty else { return }
        do {
            try await publisher.publish(events: retries.map { ($0.topic, $0.payload) })
        } catch {
            // The sender is told to publish again, as for any failure, and the retry answers then.
            logger.warning("could not answer retried messages", metadata: ["error": "\(error)"])
            for retry in retries {
                await reject(
                    retry.send, Rejection(.unavailable, "The server could not store this now; publish it again."))
            }
        }
    }

    /// Marks users as having written (``ParleyCore/RecentWriters``), when reads may use replicas.
    private func mark(_ users: Set<Int64>) async {
        guard let writers, !users.isEmpty else { return }
        do {
            try await writers.wrote(Array(users))
        } catch {
            logger.warning("could not mark chat-in's senders as writers", metadata: ["error": "\(error)"])
        }
    }

    private func handleNotice(_ envelope: ClientEnvelope, roomID: Int64, uid: String, sender: Int64) async throws {
        switch envelope.type {
        case "read-message-notification":
            let target = try ReadMarker.Target(messageId: envelope.data.messageId, seq: envelope.data.seq)
            await mark([sender])
            try await rooms.markRead(roomID: roomID, target: target, by: sender)
        case "delivered-message-notification" where receipts != nil:
            guard let seq = envelope.data.seq else { throw Rejection(.invalidRequest, "seq is required.") }
            try await receipts?.delivered(roomID: roomID, seq: seq, by: sender)
        case "creating-message-info":
            try await rooms.requireWriter(roomID: roomID, userID: sender)
            if try await limiter.hit("typing:\(sender)", limit: 10, window: .seconds(10)) != nil {
                throw Rejection(.rateLimited, "Typing notices are limited to 10 per 10 seconds.")
            }
            // The client's own time is relayed (it is the client's notion of when typing began);
            // one that is not a time is an error, not silently replaced.
            let time =
                try envelope.data.time.map { text in
                    guard let date = JSONCoding.date(text) else {
                        throw Rejection(.invalidRequest, "time must be an RFC 3339 timestamp.")
                    }
                    return date
                } ?? Date()
            // A user who shares no typing is not told so: their notices go nowhere.
            if let privacy, try await !privacy.sharesTyping(sender) { return }
            let typing = RoomEvent.typing(
                userID: sender, roomID: roomID, creating: envelope.data.creating ?? true, at: time)
            try await publisher.publishTransient(topic: Topic.room(uid), payload: typing.json())
        default:
            throw Rejection(.invalidRequest, "Unknown type \(envelope.type.prefix(64)).")
        }
    }

    /// What the sender is told: the refusal's own code, or `unavailable` for a failure.
    private func rejection(for error: any Error) -> Rejection {
        switch error {
        case let rejection as Rejection: return rejection
        case let error as ParleyError: return Rejection(error)
        default:
            logger.error("chat-in message failed", metadata: ["error": "\(error)"])
            return Rejection(.unavailable, "The server could not store this now; publish it again.")
        }
    }

    private func lookUpRoom(uid: String) async throws -> Int64? {
        if let cached = roomIDs[uid] { return cached }
        let id = try await repository.roomID(uid: uid)
        if let id { roomIDs[uid] = id }
        return id
    }

    private func reject(_ send: PendingSend, _ rejection: Rejection) async {
        await reject(
            sender: send.submission.senderID, roomID: send.submission.roomID, uid: send.submission.message.uid,
            hash: send.hash, rejection)
    }

    private func reject(sender: Int64, roomID: Int64?, uid: String?, hash: String?, _ rejection: Rejection) async {
        let notice = RoomEvent.rejected(
            roomID: roomID, uid: uid, code: rejection.code, reason: rejection.reason, hash: hash,
            retryAfter: rejection.retryAfter)
        do {
            try await publisher.publish(topic: Topic.notifications(sender), payload: notice.json())
        } catch {
            logger.warning("could not send message-rejected", metadata: ["error": "\(error)"])
        }
    }

    /// A new message waiting for its batch's transaction, with what its answer needs.
    struct PendingSend {
        let submission: MessageSubmission
        /// The client's tag of the publish, echoed in a rejection.
        let hash: String?
        /// From its arrival to its batch's commit (``ParleyCore/PipelineTrace``).
        let span: PipelineSpan?
    }

    /// A `message-rejected` code and reason, in the REST API's vocabulary.
    struct Rejection: Error {
        let code: ParleyError.Code
        let reason: String
        var retryAfter: Int?

        init(_ code: ParleyError.Code, _ reason: String) {
            self.code = code
            self.reason = reason
        }

        /// A room one cannot see is `forbidden` over MQTT, as its topic is to the broker's
        /// ACL: whether it exists is not told.
        init(_ error: ParleyError) {
            code = error.code == .notFound ? .forbidden : error.code
            reason = error.detail
            retryAfter = error.retryAfter
        }
    }
}

/// A bounded map of room uids to ids, emptied when full (a deleted room's entry is harmless:
/// the membership check that follows fails for it).
final class RoomIDCache: Sendable {
    private let entries = Mutex<[String: Int64]>([:])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    subscript(uid: String) -> Int64? {
        get { entries.withLock { $0[uid] } }
        set {
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[uid] = newValue
            }
        }
    }
}

extension Result {
    /// The error of a failure; nil for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
