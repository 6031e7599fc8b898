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
                .ok, paging.page(reports.map { ReportResponse($0, now: now) }) { String($0.id) })
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
                prefix: query, emailPrefix: true, roomMatesOf: nil, after: try paging.idCursor(),
                limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found.map { UserResponse(own: $0) }) { String($0.id) })
        }
        for (path, deactivated) in [("users/:id/deactivate", true), ("users/:id/reactivate", false)] {
            admin.post(RouterPath(path)) { _, context in
                let userID = try context.parameters.id("id")
                // An administrator who locked themselves out could not undo it.
                guard !(deactivated && userID == context.identity.userID) else {
                    throw ParleyError.invalidRequest("administrators cannot deactivate themselves", field: "id")
                }
                try await accounts.setDeactivated(userID: userID, deactivated)
                return Response(status: .noContent)
            }
        }
    }
}
