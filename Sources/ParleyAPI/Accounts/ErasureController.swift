import Foundation
import Hummingbird
import ParleyCore

/// Deleting accounts and rooms, data exports and rooms' retention.
public struct ErasureController: Sendable {
    let service: ErasureService
    let links: FileLinks

    public init(service: ErasureService, links: FileLinks) {
        self.service = service
        self.links = links
    }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.delete("me") { request, context in
            let body = try await JSONBody.decode(DeleteAccountRequest.self, from: request, context: context)
            try await service.deleteOwnAccount(
                userID: context.identity.userID, proof: try body.proof(), clientAddress: context.clientAddress)
            return Response(status: .accepted)
        }
        group.post("me/export") { _, context in
            try await service.requestExport(userID: context.identity.userID)
            return Response(status: .accepted)
        }
        group.get("me/export") { _, context in
            let export = try await service.export(userID: context.identity.userID)
            return JSONResponse(.ok, ExportResponse(export, links: links))
        }
        group.delete("rooms/:id") { _, context in
            try await service.deleteRoom(roomID: try context.parameters.id("id"), by: context.identity.userID)
            return Response(status: .accepted)
        }
        group.get("rooms/:id/retention") { _, context in
            let days = try await service.retention(
                roomID: try context.parameters.id("id"), for: context.identity.userID)
            return JSONResponse(.ok, RetentionBody(maxAgeDays: days))
        }
        group.put("rooms/:id/retention") { request, context in
            let body = try await JSONBody.decode(RetentionBody.self, from: request, context: context)
            try await service.setRetention(
                roomID: try context.parameters.id("id"), days: body.maxAgeDays, by: context.identity.userID)
            return JSONResponse(.ok, body)
        }
    }

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    public func addAdminRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.delete("users/:id") { _, context in
            try await service.deleteAccount(userID: try context.parameters.id("id"), byAdmin: context.identity.userID)
            return Response(status: .accepted)
        }
    }
}

/// `{currentPassword}`, or `{subjectToken}` (a trusted issuer's token) for an account that has
/// no password.
struct DeleteAccountRequest: Decodable {
    let currentPassword: String?
    let subjectToken: String?

    func proof() throws -> ErasureService.OwnerProof {
        switch (currentPassword, subjectToken) {
        case (let password?, nil): .password(password)
        case (nil, let token?): .issuerToken(token)
        default:
            throw ParleyError.invalidRequest("give currentPassword or subjectToken", field: "currentPassword")
        }
    }
}

/// `{maxAgeDays}`: null keeps the server's default; the key is required.
struct RetentionBody: Codable {
    @NullEncoded var maxAgeDays: Int?

    init(maxAgeDays: Int?) { self.maxAgeDays = maxAgeDays }

    init(from decoder: any Decoder) throws {
        maxAgeDays = try decoder.container(keyedBy: CodingKeys.self).decode(Int?.self, forKey: .maxAgeDays)
    }

    enum CodingKeys: String, CodingKey { case maxAgeDays }
}

/// `{status, url, expiresAt}`; `url` and `expiresAt` are null until the export is ready.
struct ExportResponse: Encodable {
    let status: DataExport.Status
    @NullEncoded var url: String?
    @NullEncoded var expiresAt: Date?

    init(_ export: DataExport, links: FileLinks) {
        status = export.status
        if export.status == .ready, let fileID = export.fileID, let expiresAt = export.expiresAt {
            url = links.signed(FileLinks.contentPath(fileID), expiresAt: expiresAt)
            self.expiresAt = expiresAt
        } else {
            url = nil
            expiresAt = nil
        }
    }
}
