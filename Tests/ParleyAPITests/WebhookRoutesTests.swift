import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import Testing

@testable import ParleyAPI

/// `/v1/admin/webhooks`: registered only where the outbound rule allows (checked on the
/// resolved address), the secret answered once, changed, listed and removed by
/// administrators.
struct WebhookRoutesTests {
    @Test func aURLTheOutboundRuleRefusesIsRefusedNamingTheField() async throws {
        var harness = try await APIHarness.make()
        harness.outboundRule = OutboundRule(allowed: [AddressRange("127.0.0.0/8")!])
        let ready = harness
        try await ready.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, ready)
            for url in [
                "http://127.0.0.1:9/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest",
                "https://[::1]/hook", "https://[::ffff:10.0.0.1]/hook", "https://no-such-host.invalid/hook",
                "https://0.0.0.0/hook", "not a url",
            ] {
                let refused = try await client.json(
                    .post, "/v1/admin/webhooks", token: admin,
                    body: #"{"url":"\#(url)","events":["message.created"]}"#)
                #expect(refused.status == .badRequest && refused.problem?.field == "url", "\(url): \(refused.text)")
            }
            for (events, field) in [("[]", "events"), (#"["message.exploded"]"#, nil)] {
                let refused = try await client.json(
                    .post, "/v1/admin/webhooks", token: admin,
                    body: #"{"url":"https://127.0.0.1/hook","events":\#(events)}"#)
                #expect(refused.status == .badRequest, "\(events)")
                if let field { #expect(refused.problem?.field == field) }
            }
            let count = try await ready.database.client.query(
                "SELECT count(*) FROM cloud.webhook", logger: .quiet
            ).single(Int64.self)
            #expect(count == 0)
        }
    }

    @Test func aWebhookIsAnsweredWithItsSecretOnceThenChangedListedAndRemoved() async throws {
        var harness = try await APIHarness.make()
        harness.outboundRule = OutboundRule(allowed: [AddressRange("127.0.0.0/8")!])
        let ready = harness
        try await ready.run { client in
            let admin = try await AdminRoutesTests().signUpAdmin(client, ready)
            let created = try await client.json(
                .post, "/v1/admin/webhooks", token: admin,
                body:
                    #"{"url":"https://127.0.0.1:8443/hook","events":["room.created","message.created","room.created"]}"#
            )
            #expect(created.status == .created, "\(created.text)")
            let secret = try #require(created.json["secret"] as? String)
            #expect(secret.hasPrefix("whsec_") && Data(base64Encoded: String(secret.dropFirst(6)))?.count == 32)
            #expect(created.json["events"] as? [String] == ["message.created", "room.created"])
            #expect(created.json["enabled"] as? Bool == true && created.json["description"] is NSNull)
            let id = try #require(created.json["id"] as? Int)
            let listed = try await client.json(.get, "/v1/admin/webhooks", token: admin)
            #expect(listed.status == .ok && !listed.text.contains(secret) && !listed.text.contains("secret"))
            #expect(try decode(ListPage<Webhook>.self, from: listed.text).items.map(\.id) == [Int64(id)])
            let changed = try await client.json(
                .patch, "/v1/admin/webhooks/\(id)", token: admin,
                body: #"{"description":"orders","enabled":false,"events":["member.added"]}"#)
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(changed.json["description"] as? String == "orders" && changed.json["enabled"] as? Bool == false)
            #expect(changed.json["events"] as? [String] == ["member.added"])
            let cleared = try await client.json(
                .patch, "/v1/admin/webhooks/\(id)", token: admin, body: #"{"description":null}"#)
            #expect(cleared.json["description"] is NSNull && cleared.json["events"] as? [String] == ["member.added"])
            for body in [#"{"events":[]}"#, #"{"url":"https://10.0.0.1/"}"#] {
                let refused = try await client.json(.patch, "/v1/admin/webhooks/\(id)", token: admin, body: body)
                #expect(refused.status == .badRequest, "\(body)")
            }
            let deliveries = try await client.json(
                .get, "/v1/admin/webhooks/\(id)/deliveries?status=lost", token: admin)
            #expect(deliveries.status == .badRequest && deliveries.problem?.field == "status")
            #expect(try await client.json(.delete, "/v1/admin/webhooks/\(id)", token: admin).status == .noContent)
            #expect(try await client.json(.delete, "/v1/admin/webhooks/\(id)", token: admin).status == .notFound)
            #expect(try await client.json(.post, "/v1/admin/webhooks/\(id)/ping", token: admin).status == .notFound)
            // Only administrators.
            let user = try await client.signUp()
            let forbidden = try await client.json(.get, "/v1/admin/webhooks", token: token(user))
            #expect(forbidden.status == .forbidden)
        }
    }
}
