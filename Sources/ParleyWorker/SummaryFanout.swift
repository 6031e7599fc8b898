import ParleyCore

/// The `fanout` role's share of a busy window's end (``ParleyCore/NotificationWindows``):
/// each reader of each room due gets one `room-summary` on their notification topic, with
/// the room's newest message and their unread counts, read now (after the window ended, so
/// every message it held is counted). A room with more readers than a chunk is done in
/// chunks, the rest queued as a job of its own once this one's copies went out.
struct SummaryFanout: Sendable {
    let summaries: any RoomSummaries
    let publisher: any EventPublisher
    let queue: any JobQueue
    let chunkSize: Int

    func handle(_ job: NotificationSummaryJob) async throws {
        let read = try await summaries.summaries(of: Set(job.chunks), limit: chunkSize)
        var copies: [(topic: String, payload: String)] = []
        var rest: [ReaderChunk] = []
        for (chunk, members) in read.members.sorted(by: { $0.key.roomID < $1.key.roomID }) {
            guard let newest = read.newest[chunk.roomID] else { continue }
            let shared = try newest.message.map(EncodedMessage.init)
            for member in members {
                let event = RoomEvent.summaryJSON(
                    room: chunk.roomID, seq: newest.seq, newest: shared, unreadCount: member.unread,
                    unreadMentionCount: member.mentions, for: member.userID)
                copies.append((Topic.notifications(member.userID), event))
            }
            if members.count == chunkSize, let last = members.last {
                rest.append(ReaderChunk(roomID: chunk.roomID, after: last.userID))
            }
        }
        if !copies.isEmpty { try await publisher.publish(events: copies) }
        if !rest.isEmpty { try await queue.enqueue(NotificationSummaryJob(chunks: rest).payload) }
    }
}
