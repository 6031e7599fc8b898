import Foundation
import ParleyCore

/// The JSON shapes of reports and their resolution.

struct ReportRequest: Decodable {
    let reason: String
    let comment: String?
}

struct ResolveRequest: Decodable {
    let action: String
    let note: String?
}

/// A report for administrators: `{id, status, reason, comment, createdAt, ageSeconds, reporter,
/// room, message, resolvedAt, resolvedById, action, note}`, every key present.
struct ReportResponse: ListItem {
    static let listKey = "reports"

    let id: Int64
    let status: String
    let reason: ReportReason
    @NullEncoded var comment: String?
    let createdAt: Date
    let ageSeconds: Int
    @NullEncoded var reporter: UserResponse?
    /// The room, if it still exists.
    @NullEncoded var room: RoomSummary?
    let message: MessageSnapshot
    @NullEncoded var resolvedAt: Date?
    @NullEncoded var resolvedById: Int64?
    @NullEncoded var action: ReportAction?
    @NullEncoded var note: String?

    init(_ report: Report, now: Date) {
        id = report.id
        status = report.resolution == nil ? "open" : "resolved"
        reason = report.reason
        comment = report.comment
        createdAt = report.createdAt
        ageSeconds = max(0, Int(now.timeIntervalSince(report.createdAt)))
        reporter = report.reporter.map { UserResponse(own: $0) }
        room = report.room
        let message = report.message
        self.message = MessageSnapshot(
            id: message.messageID, seq: message.seq, sentById: message.sentById, content: message.content,
            fileId: message.fileID, createdAt: message.createdAt)
        resolvedAt = report.resolution?.at
        resolvedById = report.resolution?.byID
        action = report.resolution?.action
        note = report.resolution?.note
    }

    struct MessageSnapshot: Codable, Sendable {
        @NullEncoded var id: Int64?
        let seq: Int64
        @NullEncoded var sentById: Int64?
        let content: String
        @NullEncoded var fileId: Int64?
        let createdAt: Date
    }
}
