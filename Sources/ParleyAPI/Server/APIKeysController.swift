import Foundation
import Hummingbird
import ParleyCore

/// `/v1/admin/api-keys` and `/v1/admin/audit`: server keys issued, listed, rotated and revoked
/// by administrators, and the log of what keys and administrators did.
struct APIKeysController: Sendable {
    let keys: APIKeyService
    let audit: any AuditLog

    struct NewKeyRequest: Decodable {
        let name: String
        let scopes: [APIKeyScope]
        let expiresAt: Date?
        let issuer: String?
    }

    struct RotateRequest: Decodable {
        let graceSeconds: Int?
    }

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    func addRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.post("api-keys") { request, context in
            let body = try await JSONBody.decode(NewKeyRequest.self, from: request, context: context)
            let issued = try await keys.issue(
                name: body.name, scopes: body.scopes, issuer: body.issuer, expiresAt: body.expiresAt,
                by: context.identity.userID)
            try await audit.recordAdministrator(request, context)
            return JSONResponse(.created, issued)
        }
        admin.get("api-keys") { request, context in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let found = try await keys.list(afterID: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found) { String($0.id) })
        }
        admin.delete("api-keys/:id") { request, context in
            try await keys.revoke(id: try context.parameters.id("id"))
            try await audit.recordAdministrator(request, context)
            return Response(status: .noContent)
        }
        admin.post("api-keys/:id/rotate") { request, context in
            let body =
                request.headers[.contentLength] == "0" || request.headers[.contentType] == nil
                ? RotateRequest(graceSeconds: nil)
                : try await JSONBody.decode(RotateRequest.self, from: request, context: context)
            let issued = try await keys.rotate(
                id: try context.parameters.id("id"), graceSeconds: body.graceSeconds ?? 0)
            try await audit.recordAdministrator(request, context)
            return JSONResponse(.ok, issued)
        }
        admin.get("audit") { request, _ in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let found = try await audit.entries(beforeID: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found) { String($0.id) })
        }
    }
}

extension APIKey: ListItem {
    static var listKey: String { "keys" }
}

extension AuditEntry: ListItem {
    static var listKey: String { "entries" }
}
