import Foundation
import Logging
import Metrics
import ParleyCore
import PostgresNIO

/// Reports of messages (`messenger.report`), each with the message as it was when reported.
public struct PostgresReportRepository: ReportRepository {
    let database: PostgresPool
    let logger: Logger
    /// Signs the URLs of reporters' avatars.
    let fileLinks: FileLinks

    public init(database: PostgresPool, logger: Logger, fileLinks: FileLinks) {
        self.database = database
        self.logger = logger
        self.fileLinks = fileLinks
    }

    public func report(messageID: Int64, roomID: Int64, by reporterID: Int64, reason: ReportReason, comment: String?)
        async throws -> Bool
    {
        try await database.transaction(logger: logger) { connection in
            let (found, filed) = try await connection.query(
                """
                WITH m AS (
                    SELECT id, chat_room_id, seq, sent_by_id, content, file_id, created_at FROM messenger.message
                    WHERE id = \(messageID) AND chat_room_id = \(roomID)
                ), added AS (
                    INSERT INTO messenger.report (message_id, chat_room_id, reporter_id, reason, comment, message_seq,
                                                  message_sender_id, message_content, message_file_id,
                                                  message_file_ids, message_created_at)
                    SELECT m.id, m.chat_room_id, \(reporterID), \(reason.rawValue), \(comment), m.seq, m.sent_by_id,
                           m.content, m.file_id,
                           (SELECT coalesce(array_agg(a.file_id ORDER BY a.position), '{}')
                            FROM messenger.message_attachment a WHERE a.message_id = m.id),
                           m.created_at
                    FROM m
                    ON CONFLICT (message_id, reporter_id) DO NOTHING
                    RETURNING id
                )
                SELECT (SELECT count(*) FROM m), (SELECT id FROM added)
                """, logger: logger
            ).single((Int64, Int64?).self)
            if let filed {
                try await Outbox.record(
                    .reportFiled(
                        ReportFiled(
                            id: filed, messageId: messageID, chatRoomId: roomID, reporterId: reporterID,
                            reason: reason.rawValue)), on: connection, logger: logger)
            }
            return found == 1
        }
    }

    static let columns = """
        r.id, r.reason, r.comment, r.created_at, r.message_id, r.message_seq, r.message_sender_id,
        r.message_content, r.message_file_id, r.message_created_at, r.resolved_at, r.resolved_by_id, r.action, r.note,
        c.id, c.uid, c.name, c.type, \(UserRecord.columns("u"))
        """
    static let source = """
        messenger.report r
        LEFT JOIN messenger.chat_room c ON c.id = r.chat_room_id
        LEFT JOIN cloud.user_account u ON u.id = r.reporter_id
        """

    public func reports(resolved: Bool, after: Int64?, limit: Int) async throws -> [Report] {
        // Open reports oldest first (the queue to work through), resolved ones newest first.
        let query: PostgresQuery =
            resolved
            ? """
            SELECT \(unescaped: Self.columns) FROM \(unescaped: Self.source)
            WHERE r.resolved_at IS NOT NULL AND r.id < \(after ?? Int64.max) ORDER BY r.id DESC LIMIT \(limit)
            """
            : """
            SELECT \(unescaped: Self.columns) FROM \(unescaped: Self.source)
            WHERE r.resolved_at IS NULL AND r.id > \(after ?? 0) ORDER BY r.id LIMIT \(limit)
            """
        return try await database.client.query(query, logger: logger).collect().map(report)
    }

    public func report(id: Int64) async throws -> Report? {
        try await database.client.query(
            "SELECT \(unescaped: Self.columns) FROM \(unescaped: Self.source) WHERE r.id = \(id)", logger: logger
        ).collect().first.map(report)
    }

    public func resolve(id: Int64, action: ReportAction, note: String?, by adminID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            UPDATE messenger.report
            SET resolved_at = clock_timestamp(), resolved_by_id = \(adminID), action = \(action.rawValue), note = \(note)
            WHERE id = \(id) AND resolved_at IS NULL
            RETURNING 1
            """, logger: logger
        ).first(Int32.self) != nil
    }

    public func reopen(id: Int64) async throws {
        try await database.client.query(
            """
            UPDATE messenger.report SET resolved_at = NULL, resolved_by_id = NULL, action = NULL, note = NULL
            WHERE id = \(id)
            """, logger: logger)
    }

    func report(_ row: PostgresRow) throws -> Report {
        let cells = row.makeRandomAccess()
        func cell<T: PostgresDecodable>(_ index: Int, _ type: T.Type) throws -> T { try cells[index].decode(T.self) }
        let resolution = try cell(10, Date?.self).map { at in
            Report.Resolution(
                at: at, byID: try cell(11, Int64?.self),
                action: ReportAction(rawValue: try cell(12, String?.self) ?? "") ?? .dismiss,
                note: try cell(13, String?.self))
        }
        let room = try cell(14, Int64?.self).map { id in
            RoomSummary(
                id: id, uid: try cell(15, String.self), name: try cell(16, String?.self),
                type: RoomView.Kind(rawValue: try cell(17, String.self)) ?? .multiparty)
        }
        let reporter = try cell(18, Int64?.self).map { id in
            try UserRecord.user(
                (
                    id, try cell(19, String.self), try cell(20, String.self), try cell(21, String.self),
                    try cell(22, Bool.self), try cell(23, Date.self), try cell(24, String?.self)
                ), links: fileLinks)
        }
        return Report(
            id: try cell(0, Int64.self), reason: ReportReason(rawValue: try cell(1, String.self)) ?? .other,
            comment: try cell(2, String?.self), createdAt: try cell(3, Date.self), reporter: reporter, room: room,
            message: Report.Snapshot(
                messageID: try cell(4, Int64?.self), seq: try cell(5, Int64.self), sentById: try cell(6, Int64?.self),
                content: try cell(7, String.self), fileID: try cell(8, Int64?.self), createdAt: try cell(9, Date.self)),
            resolution: resolution)
    }
}

/// The open reports and how long the oldest has waited, recorded as `parley_reports_open` and
/// `parley_reports_oldest_open_age_seconds` (an operator's queue growing unseen is a policy
/// breach: app stores require acting on reports).
public enum OpenReports {
    public static func measure(_ database: PostgresPool, logger: Logger) async throws {
        let row = try await database.client.query(
            """
            SELECT count(*)::bigint, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8
            FROM messenger.report WHERE resolved_at IS NULL
            """, logger: logger
        ).first((Int64, Double).self)
        Gauge(label: "parley_reports_open").record(Int(row?.0 ?? 0))
        Gauge(label: "parley_reports_oldest_open_age_seconds").record(max(row?.1 ?? 0, 0))
    }
}
