import Foundation
import Hummingbird
import ParleyCore

/// `GET /v1/search/messages` and `GET /v1/search/rooms`.
public struct SearchController: Sendable {
    let service: SearchService

    public init(service: SearchService) { self.service = service }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("search/messages") { request, context in
            let paging = try Paging(request, defaultLimit: 20, maximum: 50)
            let roomID = try request.uri.queryParameters["roomId"].map { text in
                guard let id = Int64(text), id > 0 else {
                    throw ParleyError.invalidRequest("roomId must be a room's id", field: "roomId")
                }
                return id
            }
            let results = try await service.messages(
                q: request.uri.queryParameters["q"].map(String.init), roomID: roomID, before: try paging.idCursor(),
                limit: paging.readLimit, for: context.identity.userID)
            return JSONResponse(
                .ok, paging.page(results.map(SearchResultBody.init)) { String($0.message.id) })
        }
        group.get("search/rooms") { request, context in
            let paging = try Paging(request, defaultLimit: 20, maximum: 100)
            let page = RoomPage(limit: paging.limit, cursor: paging.cursor)
            let (rooms, next) = try await service.rooms(
                q: request.uri.queryParameters["q"].map(String.init), page: page, for: context.identity.userID)
            return JSONResponse(
                .ok, RoomsResponse(rooms: rooms.map { RoomResponse($0, to: context.identity) }, nextCursor: next))
        }
    }
}

/// `{message, room: {id, uid, name, type}, highlight}`.
struct SearchResultBody: ListItem {
    static let listKey = "results"

    let message: Message
    let room: RoomSummary
    let highlight: String

    init(_ result: SearchService.Result) {
        message = result.hit.message
        room = result.hit.room
        highlight = result.highlight
    }
}
