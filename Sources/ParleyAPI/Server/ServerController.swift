import Foundation
import Hummingbird
import ParleyCore

/// `/v1/server/*`: the app's backend acting through a server key, each route behind its scope.
struct ServerController: Sendable {
    let rooms: RoomService
    let provisioning: IdentityProvisioning
    let bots: BotService
    let endpoint: MQTTEndpoint

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
                switch (body.sentBy, context.key.botId) {
                case (nil, let botID?):
                    // A member's send: the bot's role in the room, its budget, the hook.
                    try await rooms.send(roomID: roomID, message: body.message, by: botID)
                case (_, .some):
                    throw ParleyError(.forbidden, "A bot's key speaks only as the bot: leave sentBy out.")
                case (nil, nil):
                    throw ParleyError.invalidRequest(#"sentBy is {"externalId": "…"} or "system""#, field: "sentBy")
                case (.system?, nil):
                    try await rooms.postNotice(roomID: roomID, message: body.message)
                case (.user(let externalID)?, nil):
                    try await rooms.send(
                        asServerFor: try await user(externalID, of: context.key).id, roomID: roomID,
                        message: body.message)
                }
            return JSONResponse(created ? .created : .ok, message)
        }
        server.post("mqtt-credentials") { _, context in
            guard let botID = context.key.botId else {
                throw ParleyError(.forbidden, "Only a bot's key has MQTT credentials.")
            }
            return JSONResponse(
                .ok, LoginResponse.MQTT(endpoint: endpoint, try await bots.mqttCredentials(botID: botID)))
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
            let roomID = try context.parameters.id("id")
            // A bot reads as the member it is: its rooms only.
            let (messages, hasMore) =
                if let botID = context.key.botId {
                    try await rooms.history(roomID: roomID, query: query, for: botID)
                } else {
                    try await rooms.serverHistory(roomID: roomID, query: query)
                }
            return JSONResponse(
                .ok,
                MessagesResponse(
                    messages: messages, hasMore: hasMore,
                    nextCursor: hasMore ? HistoryCursor.next(after: messages, query: query)?.encoded : nil))
        }
    }
}
