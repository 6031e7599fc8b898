import Hummingbird
import ParleyCore

/// `/v1/me/blocks`: the users the caller blocked.
public struct BlocksController: Sendable {
    let service: BlockService

    public init(service: BlockService) { self.service = service }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("me/blocks") { request, context in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let users = try await service.blocked(
                by: context.identity.userID, after: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(
                .ok, paging.page(users.map { UserResponse($0, to: context.identity) }) { String($0.id) })
        }
        group.put("me/blocks/:userId") { _, context in
            try await service.block(try context.parameters.id("userId"), by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.delete("me/blocks/:userId") { _, context in
            try await service.unblock(try context.parameters.id("userId"), by: context.identity.userID)
            return Response(status: .noContent)
        }
    }
}
