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
struct ReportResponse: Encodable, Sendable {
    let report: Report
    let now: Date

    init(_ report: Report, now: Date) {
        self.report = report
        self.now = now
    }

    struct MessageSnapshot: Encodable {
        let id: Int64?
        let seq: Int64
        let sentById: Int64?
        let content: String
        let fileId: Int64?
        let createdAt: Date

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(seq, forKey: .seq)
            try container.encode(sentById, forKey: .sentById)
            try container.encode(content, forKey: .content)
            try container.encode(fileId, forKey: .fileId)
            try container.encode(createdAt, forKey: .createdAt)
        }

        enum CodingKeys: String, CodingKey { case id, seq, sentById, content, fileId, createdAt }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(report.id, forKey: .id)
        try container.encode(report.resolution == nil ? "open" : "resolved", forKey: .status)
        try container.encode(report.reason, forKey: .reason)
        try container.encode(report.comment, forKey: .comment)
        try container.encode(report.createdAt, forKey: .createdAt)
        try container.encode(max(0, Int(now.timeIntervalSince(report.createdAt))), forKey: .ageSeconds)
        try container.encode(report.reporter.map { UserResponse(own: $0) }, forKey: .reporter)
        try container.encode(report.room, forKey: .room)
        let message = report.message
        try container.encode(
            MessageSnapshot(
                id: message.messageID, seq: message.seq, sentById: message.sentById, content: message.content,
                fileId: message.fileID, createdAt: message.createdAt), forKey: .message)
        try container.encode(report.resolution?.at, forKey: .resolvedAt)
        try container.encode(report.resolution?.byID, forKey: .resolvedById)
        try container.encode(report.resolution?.action, forKey: .action)
        try container.encode(report.resolution?.note, forKey: .note)
    }

    enum CodingKeys: String, CodingKey {
        case id, status, reason, comment, createdAt, ageSeconds, reporter, room, message, resolvedAt, resolvedById
        case action, note
    }
}
