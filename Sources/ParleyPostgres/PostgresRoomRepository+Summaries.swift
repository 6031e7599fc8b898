import ParleyCore
import PostgresNIO

extension PostgresRoomRepository: RoomSummaries {
    /// Two statements on one connection: the members' counts, then the newest messages (a
    /// message is read once per room, not once per member).
    public func summaries(of chunks: Set<ReaderChunk>, limit: Int) async throws -> SummaryRead {
        let chunks = Array(chunks)
        return try await database.client.withConnection { connection in
            var read = SummaryRead()
            var seqs: [Int64: Int64] = [:]
            let members = try await connection.execute(
                SummaryMembersStatement(
                    rooms: chunks.map(\.roomID), after: chunks.map(\.after), limit: Int32(clamping: limit)),
                logger: logger)
            for try await (room, after, user, seq, unread, mentions) in members {
                read.members[ReaderChunk(roomID: room, after: after), default: []].append(
                    MemberUnread(userID: user, unread: unread, mentions: mentions))
                seqs[room] = seq
            }
            guard !seqs.isEmpty else { return read }
            var messages: [Int64: Message] = [:]
            for try await row in try await connection.execute(
                NewestMessagesStatement(rooms: Array(seqs.keys)), logger: logger)
            {
                let message = try MessageColumns.decode(row.makeRandomAccess(), from: 0, links: fileLinks).message
                messages[message.chatRoomId] = message
            }
            for (room, seq) in seqs {
                read.newest[room] = SummaryRead.Newest(
                    seq: seq, message: messages[room].flatMap { $0.seq == seq ? $0 : nil })
            }
            return read
        }
    }
}
