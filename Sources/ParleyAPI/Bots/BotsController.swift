import Foundation
import Hummingbird
import ParleyCore

/// `/v1/admin/bots`: bots made, listed and deleted by administrators (or an admin key), and the
/// deliveries of the commands sent to them.
struct BotsController: Sendable {
    let service: BotService
    let endpoint: MQTTEndpoint
    let audit: any AuditLog

    struct NewBotRequest: Decodable {
        let name: String
        let webhookUrl: String?
    }

    /// `{user, apiKey, webhookSecret, mqtt}`: the secrets are answered this once.
    struct CreatedBotResponse: Encodable {
        let user: UserResponse
        let apiKey: IssuedAPIKey
        let webhookSecret: String?
        let mqtt: LoginResponse.MQTT

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(user, forKey: .user)
            try container.encode(apiKey, forKey: .apiKey)
            try container.encode(webhookSecret, forKey: .webhookSecret)
            try container.encode(mqtt, forKey: .mqtt)
        }

        enum Keys: String, CodingKey { case user, apiKey, webhookSecret, mqtt }
    }

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    func addRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.post("bots") { request, context in
            let body = try await JSONBody.decode(NewBotRequest.self, from: request, context: context)
            let created = try await service.create(
                name: body.name, webhookUrl: body.webhookUrl, by: context.identity.userID)
            try await audit.recordAdministrator(request, context)
            return JSONResponse(
                .created,
                CreatedBotResponse(
                    user: UserResponse(own: created.user), apiKey: created.apiKey,
                    webhookSecret: created.webhookSecret, mqtt: LoginResponse.MQTT(endpoint: endpoint, created.mqtt)))
        }
        admin.get("bots") { request, _ in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let found = try await service.list(afterID: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found) { String($0.id) })
        }
        admin.get("bots/:id/deliveries") { request, context in
            let botID = try context.parameters.id("id")
            return try await WebhooksController.deliveries(request) { status, before, limit in
                try await service.deliveries(botID: botID, status: status, before: before, limit: limit)
            }
        }
        admin.delete("bots/:id") { request, context in
            try await service.delete(id: try context.parameters.id("id"))
            try await audit.recordAdministrator(request, context)
            return Response(status: .noContent)
        }
    }
}

extension Bot: ListItem {
    static var listKey: String { "bots" }
}
