import Foundation
import Hummingbird
import ParleyCore

/// `POST /v1/rooms/{id}/delivered` and `GET /v1/rooms/{id}/receipts`: how far members'
/// devices received and read a room.
struct ReceiptsController: Sendable {
    let service: ReceiptService

    struct DeliveredRequest: Decodable {
        let seq: Int64
    }

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.post("rooms/:id/delivered") { request, context in
            let body = try await JSONBody.decode(DeliveredRequest.self, from: request, context: context)
            try await service.delivered(
                roomID: try context.parameters.id("id"), seq: body.seq, by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.get("rooms/:id/receipts") { request, context in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let found = try await service.receipts(
                roomID: try context.parameters.id("id"), for: context.identity.userID,
                afterUserID: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found) { String($0.userId) })
        }
    }
}

extension Receipt: ListItem {
    static var listKey: String { "receipts" }
}
