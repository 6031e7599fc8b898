import Foundation
import Hummingbird
import ParleyCore

/// `/v1/server/*`: the app's backend acting through a server key, each route behind its scope.
struct ServerController: Sendable {
    let rooms: RoomService
    let provisioning: IdentityProvisioning

    /// `PUT /v1/server/users/{externalId}`: what the app's backend says of its user.
    struct UserRequest: Decodable {
        let email: String?
        let firstName: String?
        let lastName: String?
    }

    /// The Parley user of the app's `externalId` (a subject of the key's issuer); 404 for one
    /// the app never made nor signed in.
    func user(_ externalID: String, of key: APIKey) async throws -> User {
        guard let user = try await provisioning.user(of: ExternalIdentity(issuer: key.issuer, subject: externalID))
        else { throw ParleyError.notFound("No user has this externalId.") }
        return user
    }

    /// The user, by the app's id and Parley's.
    struct ServerUserResponse: Codable {
        let externalId: String
        let user: UserResponse
    }

    func addRoutes(to server: RouterGroup<ServerRequestContext>) {
        addRoomRoutes(to: server)
        server.post("rooms/:id/messages") { request, context in
            try context.require(.messagesWrite)
            let body = try await JSONBody.decode(
                ServerMessageRequest.self, from: request, context: context, limit: JSONBody.messageLimit)
            let roomID = try context.parameters.id("id")
            let (message, created) =
                switch body.sentBy {
                case .system:
                    try await rooms.postNotice(roomID: roomID, message: body.message)
                case .user(let externalID):
                    try await rooms.send(
                        asServerFor: try await user(externalID, of: context.key).id, roomID: roomID,
                        message: body.message)
                }
            return JSONResponse(created ? .created : .ok, message)
        }
        server.put("users/:externalId") { request, context in
            try context.require(.usersWrite)
            let body = try await JSONBody.decode(UserRequest.self, from: request, context: context)
            let externalID = context.parameters.get("externalId") ?? ""
            // The app's backend speaks for its users' e-mail as their issuer does when it says
            // `email_verified`: linking an existing account still needs the link setting.
            let outcome = try await provisioning.upsert(
                ExternalIdentity(issuer: context.key.issuer, subject: externalID),
                profile: ExternalProfile(
                    email: body.email, firstName: body.firstName, lastName: body.lastName, emailVerified: true))
            return JSONResponse(
                outcome.created ? .created : .ok,
                ServerUserResponse(externalId: externalID, user: UserResponse(own: outcome.user)))
        }
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
