import Foundation
import Hummingbird
import ParleyCore

/// Reports of messages (any reader) and what administrators do about them and about accounts.
public struct ModerationController: Sendable {
    let service: ModerationService
    let accounts: AccountService
    let users: any UserRepository

    public init(service: ModerationService, accounts: AccountService, users: any UserRepository) {
        self.service = service
        self.accounts = accounts
        self.users = users
    }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.post("rooms/:id/messages/:messageId/reports") { request, context in
            let body = try await JSONBody.decode(ReportRequest.self, from: request, context: context)
            try await service.report(
                roomID: try context.parameters.id("id"), messageID: try context.parameters.id("messageId"),
                reason: body.reason, comment: body.comment, by: context.identity.userID)
            return Response(status: .accepted)
        }
    }

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    public func addAdminRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.get("reports") { request, _ in
            let resolved: Bool
            switch request.uri.queryParameters["status"] ?? "open" {
            case "open": resolved = false
            case "resolved": resolved = true
            default: throw ParleyError.invalidRequest("status must be open or resolved", field: "status")
            }
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let reports = try await service.list(
                resolved: resolved, after: try paging.idCursor(), limit: paging.readLimit)
            let now = Date()
            return JSONResponse(
                .ok, paging.page("reports", reports.map { ReportResponse($0, now: now) }) { String($0.report.id) })
        }
        admin.post("reports/:id/resolve") { request, context in
            let body = try await JSONBody.decode(ResolveRequest.self, from: request, context: context)
            let report = try await service.resolve(
                id: try context.parameters.id("id"), action: body.action, note: body.note, by: context.identity.userID)
            return JSONResponse(.ok, ReportResponse(report, now: Date()))
        }
        admin.get("users") { request, _ in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let query = request.uri.queryParameters["q"].map { $0.trimmingCharacters(in: .whitespaces) }
            if let query { _ = try TextRule.validated(query, field: "q", length: 1...100) }
            let found = try await users.search(
                prefix: query, emailPrefix: true, after: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page("users", found.map { UserResponse(own: $0) }) { String($0.id) })
        }
        for (path, deactivated) in [("users/:id/deactivate", true), ("users/:id/reactivate", false)] {
            admin.post(RouterPath(path)) { _, context in
                try await accounts.setDeactivated(userID: try context.parameters.id("id"), deactivated)
                return Response(status: .noContent)
            }
        }
    }
}

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
