import Foundation
import Hummingbird
import ParleyCore

/// `/v1/admin/webhooks`: endpoints of the app's backend that hear Parley's events, their
/// deliveries, pings and retries (system administrators, or an admin key).
struct WebhooksController: Sendable {
    let service: WebhookService

    struct NewWebhookRequest: Decodable {
        let url: String
        let events: [WebhookEvent.Kind]
        let description: String?
    }

    /// `PATCH`: what is present changes; `description: null` clears it.
    struct ChangeRequest: Decodable {
        let change: WebhookChange

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            var change = WebhookChange()
            change.url = try container.decodeIfPresent(String.self, forKey: .url)
            change.events = try container.decodeIfPresent([WebhookEvent.Kind].self, forKey: .events)
            if container.contains(.description) {
                change.description = .some(try container.decodeIfPresent(String.self, forKey: .description))
            }
            change.enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled)
            self.change = change
        }

        enum Keys: String, CodingKey { case url, events, description, enabled }
    }

    /// `{deliveries, nextCursor}`, newest first.
    struct DeliveriesPage: Encodable {
        let deliveries: [WebhookDelivery]
        let nextCursor: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(deliveries, forKey: .deliveries)
            try container.encode(nextCursor, forKey: .nextCursor)
        }

        enum Keys: String, CodingKey { case deliveries, nextCursor }
    }

    struct PingResponse: Encodable {
        let deliveryId: String
    }

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    func addRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.post("webhooks") { request, context in
            let body = try await JSONBody.decode(NewWebhookRequest.self, from: request, context: context)
            let created = try await service.create(url: body.url, events: body.events, description: body.description)
            return JSONResponse(.created, created)
        }
        admin.get("webhooks") { request, _ in
            let paging = try Paging(request, defaultLimit: 50, maximum: 200)
            let found = try await service.list(afterID: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found) { String($0.id) })
        }
        admin.patch("webhooks/:id") { request, context in
            let body = try await JSONBody.decode(ChangeRequest.self, from: request, context: context)
            return JSONResponse(.ok, try await service.update(try context.parameters.id("id"), change: body.change))
        }
        admin.delete("webhooks/:id") { _, context in
            try await service.delete(id: try context.parameters.id("id"))
            return Response(status: .noContent)
        }
        admin.post("webhooks/:id/ping") { _, context in
            JSONResponse(
                .accepted, PingResponse(deliveryId: try await service.ping(id: try context.parameters.id("id"))))
        }
        admin.get("webhooks/:id/deliveries") { request, context in
            let webhookID = try context.parameters.id("id")
            return try await Self.deliveries(request) { status, before, limit in
                try await service.deliveries(webhookID: webhookID, status: status, before: before, limit: limit)
            }
        }
        admin.post("webhooks/:id/deliveries/:deliveryId/retry") { _, context in
            try await service.retry(
                deliveryID: context.parameters.get("deliveryId") ?? "", webhookID: try context.parameters.id("id"))
            return Response(status: .accepted)
        }
    }
}

extension WebhooksController {
    /// A page of deliveries (`?status&cursor&limit`), newest first, as `list` reads them.
    static func deliveries(
        _ request: Request,
        list: (WebhookDelivery.Status?, String?, Int) async throws -> [WebhookDelivery]
    ) async throws -> JSONResponse<DeliveriesPage> {
        let paging = try Paging(request, defaultLimit: 50, maximum: 200)
        let status = try request.uri.queryParameters["status"].map { text in
            guard let status = WebhookDelivery.Status(rawValue: String(text)) else {
                throw ParleyError.invalidRequest("status is pending, succeeded or failed", field: "status")
            }
            return status
        }
        let found = try await list(status, paging.cursor, paging.readLimit)
        let page = Array(found.prefix(paging.limit))
        return JSONResponse(
            .ok, DeliveriesPage(deliveries: page, nextCursor: found.count > paging.limit ? page.last?.cursor : nil))
    }
}

extension Webhook: ListItem {
    static var listKey: String { "webhooks" }
}
