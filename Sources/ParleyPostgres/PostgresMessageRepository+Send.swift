import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// The one writer of messages: a batch of sends (a group commit), one send, or a new room's
/// first message, in one transaction of set-based statements (see
/// <doc:MessagePipelinePerformance>); the one-round-trip shape of the common batch is
/// ``sendIfAllowed(batch:minimum:)``.
extension PostgresMessageRepository {
    public func send(batch: [MessageSubmission]) async throws -> [SendOutcome] {
        // A key's first send in the batch is stored; its later sends are retries of it.
        var firstOfKey: [MessageKey: Int] = [:]
        var distinct: [MessageSubmission] = []
        let slots = batch.map { submission in
            if let slot = firstOfKey[submission.key] { return slot }
            firstOfKey[submission.key] = distinct.count
            distinct.append(submission)
            return distinct.count - 1
        }
        let distinctSends = try await storeDistinct(distinct)
        let stored = try await answering(distinctSends.outcomes, versions: distinctSends.versions)
        var answered = Set<Int>()
        return slots.map { slot in
            answered.insert(slot).inserted
                ? stored[slot] : stored[slot].map { SentMessage(message: $0.message, created: false) }
        }
    }

    /// The outcomes with the stored messages' receipts, when answers carry them (a retry's
    /// message has them already).
    private func answering(_ outcomes: [SendOutcome], versions: [Int64: Int64]) async throws -> [SendOutcome] {
        let sent = outcomes.map { outcome -> SentMessage? in
            guard case .success(let sent) = outcome, sent.created else { return nil }
            return sent
        }
        let answered = try await answering(sent, versions: versions)
        return zip(outcomes, answered).map { outcome, answer in answer.map { .success($0) } ?? outcome }
    }

    /// Sends with distinct keys: together in one transaction, or, when that fails for a reason
    /// other than the database being unreachable, one by one (so one bad send fails alone).
    private func storeDistinct(_ submissions: [MessageSubmission]) async throws -> StoredSends {
        if submissions.count > 1 {
            do {
                return try await database.transaction(logger: logger) { try await store(submissions, on: $0) }
            } catch let error as any DependencyError where error.isUnavailability {
                throw error
            } catch {
                logger.warning(
                    "a batch of sends failed; storing them one by one",
                    metadata: ["count": "\(submissions.count)", "error": "\(String(reflecting: error))"])
            }
        }
        var stored = StoredSends(outcomes: [], versions: [:])
        for submission in submissions {
            do {
                let one = try await database.transaction(logger: logger) { try await store([submission], on: $0) }
                stored.outcomes += one.outcomes
                stored.versions.merge(one.versions) { max($0, $1) }
            } catch let error as any DependencyError where error.isUnavailability && submissions.count == 1 {
                throw error
            } catch {
                stored.outcomes.append(.failure(error))
            }
        }
        return stored
    }

    /// One outcome per send, in order, and the readers version of each room a message was
    /// stored in, as the store read it.
    struct StoredSends {
        var outcomes: [SendOutcome]
        var versions: [Int64: Int64]
    }

    /// Stores sends with distinct keys in the caller's transaction, in three or four
    /// statements whatever their number: files, room locks, retries, and the insert (which
    /// also records the outbox rows). One outcome per send, in order.
    func store(_ submissions: [MessageSubmission], on connection: PostgresConnection) async throws
        -> StoredSends
    {
        var outcomes = [SendOutcome?](repeating: nil, count: submissions.count)
        var versions: [Int64: Int64] = [:]
        let owned = try await submitFiles(of: submissions, on: connection)
        // Locked before the retries are looked for: a send of one of these keys that
        // committed before is then visible, and none can commit until this one has.
        let rooms = Set(
            try await connection.execute(
                LockRoomsStatement(roomIDs: Set(submissions.map(\.roomID)).sorted()), logger: logger
            ).allRows())
        let retries = try await storedMessages(of: submissions, on: connection)
        var new: [Int] = []
        for (slot, submission) in submissions.enumerated() {
            if let stored = retries[submission.key] {
                outcomes[slot] = .success(SentMessage(message: stored, created: false))
            } else if !submission.message.attachments.allSatisfy({ owned.contains([$0, submission.senderID]) }) {
                outcomes[slot] = .failure(
                    ParleyError(
                        .fileUnavailable, "A file is not one of the sender's uploads.",
                        field: submission.message.attachments.count == 1 ? "fileId" : "attachments"))
            } else if rooms.contains(submission.roomID) {
                new.append(slot)
            } else {
                outcomes[slot] = .failure(ParleyError.notFound("No such room."))
            }
        }
        if !new.isEmpty {
            let rows = try await connection.execute(
                InsertMessagesStatement(new.map { submissions[$0] }), logger: logger
            ).allRows()
            for row in rows {
                let place = Int(try row.decode(Int64.self))
                let columns = row.makeRandomAccess()
                let (message, _) = try MessageColumns.decode(columns, from: 1, links: fileLinks)
                versions[message.chatRoomId] = try columns[MessageStore.readersVersionColumn].decode(Int64.self)
                outcomes[new[place - 1]] = .success(SentMessage(message: message, created: true))
            }
        }
        return StoredSends(outcomes: outcomes.map { $0 ?? .failure(MissingRowError()) }, versions: versions)
    }

    /// The `[file, sender]` pairs whose file the sender uploaded, now marked submitted.
    private func submitFiles(of submissions: [MessageSubmission], on connection: PostgresConnection) async throws
        -> Set<[Int64]>
    {
        let files = submissions.flatMap { submission in
            submission.message.attachments.map { ($0, submission.senderID) }
        }
        guard !files.isEmpty else { return [] }
        let rows = try await connection.execute(
            SubmitFilesStatement(fileIDs: files.map(\.0), ownerIDs: files.map(\.1)), logger: logger
        ).allRows()
        return Set(rows.map { [$0.0, $0.1] })
    }

    private func storedMessages(of submissions: [MessageSubmission], on connection: PostgresConnection) async throws
        -> [MessageKey: Message]
    {
        let rows = try await connection.execute(
            StoredMessagesStatement(
                roomIDs: submissions.map(\.roomID), senderIDs: submissions.map(\.senderID),
                uids: submissions.map(\.message.uid)), logger: logger
        ).allRows()
        var stored: [MessageKey: Message] = [:]
        for message in try await messages(from: rows, viewer: nil, on: connection) {
            // A notice of the app's server has no sender: its key is the system sender's.
            guard let sender = message.sentById ?? (message.type == .system ? MessageSubmission.systemSender : nil)
            else { continue }
            stored[MessageKey(roomID: message.chatRoomId, senderID: sender, uid: message.uid)] = message
        }
        return stored
    }
}
