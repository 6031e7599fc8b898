import Foundation
import Hummingbird
import ParleyCore

/// `/v1/server/*`: the app's backend acting through a server key, each route behind its scope.
struct ServerController: Sendable {
    let rooms: RoomService

    func addRoutes(to server: RouterGroup<ServerRequestContext>) {
        server.get("rooms/:id/messages") { request, context in
            try context.require(.messagesRead)
            let query = try RoomsController.historyQuery(request)
            let (messages, hasMore) = try await rooms.serverHistory(
                roomID: try context.parameters.id("id"), query: query)
            return JSONResponse(
                .ok,
                MessagesResponse(
                    messages: messages, hasMore: hasMore,
                    nextCursor: hasMore ? HistoryCursor.next(after: messages, query: query)?.encoded : nil))
        }
    }
}
