import Foundation
import ParleyCore
import ParleyPostgres
import PostgresNIO
import Testing

/// Each stored message's outbox row carries the trace of its own send (``PipelineTrace``),
/// whichever path stored it: the one-statement batch, the general batch, or a send alone.
struct OutboxTraceTests {
    @Test func eachMessagesOutboxRowCarriesItsOwnSendsTraceOnEveryPath() async throws {
        try await SendBatchTests().withRoom { room in
            func send(_ sender: Int64, _ uid: String, _ trace: String?, mentions: [Int64] = []) throws
                -> MessageSubmission
            {
                MessageSubmission(
                    roomID: room.id, senderID: sender,
                    message: try NewMessage(content: uid, uid: uid, fileId: nil, mentions: mentions),
                    traceparent: trace)
            }
            // Plain sends: the one statement. A repeated uid is stored once, with the first's trace.
            let plain = try await room.service.send([
                try send(room.writer, "a", "trace-a"), try send(room.admin, "b", nil),
                try send(room.writer, "c", "trace-c"), try send(room.writer, "a", "trace-a-again"),
            ])
            // A mention takes the whole batch to the general path.
            let general = try await room.service.send([
                try send(room.writer, "d", nil, mentions: [room.admin]), try send(room.admin, "e", "trace-e"),
                try send(room.writer, "f", "trace-f"),
            ])
            // A batch of one with a mention is stored alone.
            let alone = try await room.service.send([try send(room.admin, "g", "trace-g", mentions: [room.writer])])
            for outcome in plain + general + alone { _ = try outcome.get() }

            let rows = try await room.harness.database.client.query(
                """
                SELECT m.uid, o.traceparent FROM messenger.outbox o JOIN messenger.message m ON m.id = o.message_id
                WHERE m.chat_room_id = \(room.id) ORDER BY o.id
                """, logger: .quiet
            ).collect().map { try $0.decode((String, String?).self) }
            // The room's first message was sent untraced, with the room.
            #expect(rows.map(\.0) == ["first", "a", "b", "c", "d", "e", "f", "g"])
            #expect(rows.map(\.1) == [nil, "trace-a", nil, "trace-c", nil, "trace-e", "trace-f", "trace-g"])
        }
    }
}
