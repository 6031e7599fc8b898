import Foundation
import Hummingbird
import HummingbirdTesting
import ParleyCore
import ParleyIdentity
import ParleyPostgres
import Testing

@testable import ParleyAPI

struct OpenAPIDocumentTests {
    @Test func theDocumentDescribesEveryPublicRoute() async throws {
        var harness = try await APIHarness.make()
        // An issuer trusted, so that the token exchange is a route too (its keys are not read).
        harness.issuers = [
            TrustedIssuer(issuer: "https://id.example", audience: "parley", keys: .file("/none"), algorithms: [.es256])
        ]
        harness.issuerKeys = IssuerKeys(fetcher: IssuerKeySources(https: nil))
        let router = harness.publicRouter()
        let document = try await fetchDocument(router)
        #expect(document.hasPrefix("openapi: 3.1"))
        #expect(router.routes.count >= 35)
        try Self.expectDescribed(router, in: document)
    }

    /// Every event a webhook may subscribe to is in the document's `webhooks`, with its
    /// payload, and the subscription's enum names exactly those.
    @Test func theDocumentListsEveryWebhookEvent() async throws {
        let harness = try await APIHarness.make()
        let document = try await fetchDocument(harness.publicRouter())
        let start = try #require(document.range(of: "\nwebhooks:\n"))
        let end = try #require(document.range(of: "\ncomponents:\n"))
        let section = document[start.upperBound..<end.lowerBound]
        let listed = section.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.map {
            $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: ":"))
        }
        #expect(listed == WebhookEvent.Kind.allCases.map(\.rawValue))
        for kind in WebhookEvent.Kind.allCases {
            #expect(section.contains("type: { const: \(kind.rawValue) }"), "\(kind.rawValue)")
        }
        let enumLine = try #require(
            document.split(separator: "\n").first { $0.contains("enum: [message.created, message.edited") })
        #expect(enumLine.contains(WebhookEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))
    }

    /// The internal listener's routes (health, metrics, the brokers' authorisation) too.
    @Test func theDocumentDescribesEveryInternalRoute() async throws {
        let harness = try await APIHarness.make()
        let authority = BrokerAuthority(
            key: APIHarness.mqttKey, server: nil,
            sessions: PostgresSessionRepository(database: harness.database, logger: .quiet),
            rooms: PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing),
            privacy: PostgresPrivacyRepository(database: harness.database, logger: .quiet))
        let router = ParleyRoutes.forTesting(broker: BrokerAuthController(authority: authority)).internalRouter()
        let document = try await fetchDocument(harness.publicRouter())
        #expect(router.routes.count >= 8)
        try Self.expectDescribed(router, in: document)
    }

    static func expectDescribed(_ router: Router<ParleyRequestContext>, in document: String) throws {
        for route in router.routes {
            // `:id` in the router is `{id}` in OpenAPI.
            let path = route.path.description.split(separator: "/").map { segment in
                segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
            }.joined(separator: "/")
            let section = try #require(
                Self.section(of: "/" + path, in: document), "\(route.method) /\(path) missing from openapi.yaml")
            #expect(section.contains("\n    \(route.method.rawValue.lowercased()):"), "\(route.method) /\(path)")
        }
    }

    func fetchDocument(_ router: Router<ParleyRequestContext>) async throws -> String {
        let application = Application(router: router, logger: .quiet)
        return try await application.test(.router) { client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("application/yaml") == true)
                return String(buffer: response.body)
            }
        }
    }

    /// The lines of one path item: from `  /path:` to the next path or section.
    static func section(of path: String, in document: String) -> String? {
        guard let start = document.range(of: "\n  \(path):\n") else { return nil }
        let rest = document[start.upperBound...]
        let end = rest.range(of: #"\n  /|\n[a-z]"#, options: .regularExpression)?.lowerBound ?? rest.endIndex
        return "\n" + String(rest[..<end])
    }
}

struct AsyncAPIDocumentTests {
    @Test func theMQTTContractIsServedWithEveryTopicAndEventType() async throws {
        let application = Application(router: ParleyRoutes.forTesting().publicRouter(), logger: .quiet)
        let document = try await application.test(.router) { client in
            try await client.execute(uri: "/asyncapi.yaml", method: .get) { String(buffer: $0.body) }
        }
        #expect(document.hasPrefix("asyncapi: 2.6"))
        for topic in [
            "chat-room/{roomUid}", "chat-in/{roomUid}", "messenger-notifications/{userId}", "user/{userId}/online",
        ] {
            #expect(document.contains("\n  \(topic):"), "\(topic)")
        }
        for type in [
            "new-message-notification", "read-message-notification", "creating-message-info",
            "chatroom-change-notification", "message-rejected", "online-user-message",
        ] {
            #expect(document.contains("name: \(type)"), "\(type)")
        }
        // What the server publishes: the event types it builds.
        for envelope in [
            RoomEvent.newMessage(
                Message(
                    id: 1, seq: 1, chatRoomId: 1, chatRoomUid: "u", sentById: 1, content: "", uid: "x", fileId: nil,
                    createdAt: Date())
            ).type,
            RoomEvent.read(RoomEvent.Read(marker: ReadMarker(messageId: 1, seq: 1), userID: 1, roomID: 1, at: Date()))
                .type,
            RoomEvent.change(.added, roomID: 1, by: 1, serial: 0).type,
        ] {
            #expect(document.contains("const: \(envelope)"))
        }
    }
}
