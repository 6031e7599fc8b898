import Hummingbird
import ParleyCore

/// `PUT /v1/me/avatar` and `PUT /v1/rooms/{id}/avatar`.
public struct AvatarsController: Sendable {
    let service: AvatarService

    public init(service: AvatarService) { self.service = service }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.put("me/avatar") { request, context in
            let body = try await JSONBody.decode(AvatarRequest.self, from: request, context: context)
            try await service.setOwn(fileID: body.fileId, userID: context.identity.userID)
            return Response(status: .noContent)
        }
        group.put("rooms/:id/avatar") { request, context in
            let body = try await JSONBody.decode(AvatarRequest.self, from: request, context: context)
            try await service.setRoom(
                roomID: try context.parameters.id("id"), fileID: body.fileId, by: context.identity.userID)
            return Response(status: .noContent)
        }
    }
}

/// `{fileId}`: an image the caller uploaded, or null to remove the avatar; the key is
/// required, so that `{}` removes nothing by mistake.
struct AvatarRequest: Decodable {
    let fileId: Int64?

    init(from decoder: any Decoder) throws {
        fileId = try decoder.container(keyedBy: CodingKeys.self).decode(Int64?.self, forKey: .fileId)
    }

    enum CodingKeys: String, CodingKey { case fileId }
}
