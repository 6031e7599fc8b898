import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Group commit: a batch of sends in one transaction of set-based statements (see
/// <doc:MessagePipelinePerformance>).
extension PostgresRoomRepository {
    public func roles(of members: Set<RoomUser>) async throws -> [RoomUser: RoomRole] {
        if members.count == 1, let member = members.first {
            let role = try await effectiveRole(roomID: member.roomID, userID: member.userID, on: nil)
            return role.map { [member: $0] } ?? [:]
        }
        let pairs = Array(members)
        let rows = try await database.client.execute(
            EffectiveRolesStatement(roomIDs: pairs.map(\.roomID), userIDs: pairs.map(\.userID)), logger: logger
        ).allRows()
        var roles: [RoomUser: RoomRole] = [:]
        for (roomID, userID, rank) in rows {
            if let role = rank.flatMap(RoomRole.init(rank:)) { roles[RoomUser(roomID: roomID, userID: userID)] = role }
        }
        return roles
    }

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
        let stored = try await store(distinct)
        var answered = Set<Int>()
        return slots.map { slot in
            answered.insert(slot).inserted
                ? stored[slot] : stored[slot].map { SentMessage(message: $0.message, created: false) }
        }
    }

    /// Sends with distinct keys: together in one transaction, or, when that fails for a reason
    /// other than the database being unreachable, one by one (so one bad send fails alone).
    private func store(_ submissions: [MessageSubmission]) async throws -> [SendOutcome] {
        if submissions.count > 1 {
            do {
                return try await storeTogether(submissions)
            } catch let error as any DependencyError where error.isUnavailability {
                throw error
            } catch {
                logger.warning(
                    "a batch of sends failed; storing them one by one",
                    metadata: ["count": "\(submissions.count)", "error": "\(String(reflecting: error))"])
            }
        }
        var outcomes: [SendOutcome] = []
        for submission in submissions {
            do {
                outcomes.append(.success(try await sendAlone(submission)))
            } catch let error as any DependencyError where error.isUnavailability && submissions.count == 1 {
                throw error
            } catch {
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }

    /// Four statements for the whole batch: files, room locks, retries, and the insert (which
    /// also records the outbox rows).
    private func storeTogether(_ submissions: [MessageSubmission]) async throws -> [SendOutcome] {
        try await database.transaction(logger: logger) { connection in
            var outcomes = [SendOutcome?](repeating: nil, count: submissions.count)
            let owned = try await submitFiles(of: submissions, on: connection)
            // Locked before the retries are looked for: a send of one of these keys that
            // committed before is then visible, and none can commit until this one has.
            let roomIDs = Set(submissions.map(\.roomID)).sorted()
            var lastSeq = Dictionary(
                uniqueKeysWithValues: try await connection.execute(LockRoomsStatement(roomIDs: roomIDs), logger: logger)
                    .allRows())
            let retries = try await storedMessages(of: submissions, on: connection)
            var insert = InsertMessagesStatement()
            var slotOfRow: [RoomSeq: Int] = [:]
            for (slot, submission) in submissions.enumerated() {
                if let stored = retries[submission.key] {
                    outcomes[slot] = .success(SentMessage(message: stored, created: false))
                } else if let fileID = submission.message.fileId, !owned.contains([fileID, submission.senderID]) {
                    outcomes[slot] = .failure(
                        ParleyError(.fileUnavailable, "The file is not one of the sender's uploads.", field: "fileId"))
                } else if let seq = lastSeq[submission.roomID] {
                    lastSeq[submission.roomID] = seq + 1
                    slotOfRow[RoomSeq(roomID: submission.roomID, seq: seq + 1)] = slot
                    insert.append(submission, seq: seq + 1)
                } else {
                    outcomes[slot] = .failure(ParleyError.notFound("No such room."))
                }
            }
            if !slotOfRow.isEmpty {
                try await storeNew(insert, into: &outcomes, slotOfRow: slotOfRow, on: connection)
            }
            return outcomes.map { $0 ?? .failure(MissingRowError()) }
        }
    }

    /// Inserts the new messages and records them in the outbox, in the batch's order.
    private func storeNew(
        _ insert: InsertMessagesStatement, into outcomes: inout [SendOutcome?], slotOfRow: [RoomSeq: Int],
        on connection: PostgresConnection
    ) async throws {
        let rows = try await connection.execute(insert, logger: logger).allRows()
        for message in try await messages(from: rows, viewer: nil, on: connection) {
            guard let slot = slotOfRow[RoomSeq(roomID: message.chatRoomId, seq: message.seq)] else { continue }
            outcomes[slot] = .success(SentMessage(message: message, created: true))
        }
    }

    /// The `[file, sender]` pairs whose file the sender uploaded, now marked submitted.
    private func submitFiles(of submissions: [MessageSubmission], on connection: PostgresConnection) async throws
        -> Set<[Int64]>
    {
        let files = submissions.compactMap { submission in submission.message.fileId.map { ($0, submission.senderID) } }
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
            guard let sender = message.sentById else { continue }
            stored[MessageKey(roomID: message.chatRoomId, senderID: sender, uid: message.uid)] = message
        }
        return stored
    }
}

/// A message's place in its room, by which an inserted row finds its send.
private struct RoomSeq: Hashable {
    let roomID: Int64
    let seq: Int64
}

extension InsertMessagesStatement {
    mutating func append(_ submission: MessageSubmission, seq: Int64) {
        roomIDs.append(submission.roomID)
        seqs.append(seq)
        senderIDs.append(submission.senderID)
        uids.append(submission.message.uid)
        contents.append(submission.message.content)
        fileIDs.append(submission.message.fileId ?? 0)
        replyToIDs.append(submission.message.replyToId ?? 0)
        mentions.append("{" + submission.message.mentions.map(String.init).joined(separator: ",") + "}")
        traceparents.append(submission.traceparent ?? "")
    }
}
