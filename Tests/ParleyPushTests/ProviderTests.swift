import Crypto
import Foundation
import ParleyCore
import ParleyPush
import ParleyPushSimulator
import ParleyTestSupport
import Testing

/// Each provider against the simulator: what it sends, and what it makes of each answer.
struct ProviderTests {
    static func job(_ provider: PushProvider, token: String = "token-\(UUID().uuidString.prefix(8))") -> PushJob {
        PushJob(
            deviceID: 7, userID: 42, provider: provider, token: token,
            notification: PushNotification(
                reason: .message, roomID: 3, roomUID: "room-uid-3", title: "Team", body: "Ada: hello", actorID: 5,
                messageID: 99, seq: 12, badge: 4))
    }

    func withFixture(_ body: (PushFixture, [PushProvider: any PushSender]) async throws -> Void) async throws {
        try await PushFixture.with { fixture in try await body(fixture, try fixture.senders()) }
    }

    @Test func apnsSendsASignedProviderTokenTheHeadersAndThePayload() async throws {
        try await withFixture { fixture, senders in
            let job = Self.job(.apns)
            let sent = try await senders[.apns]!.send(job)
            #expect(sent == .delivered)
            let push = try #require(fixture.simulator.received.first)
            #expect(push.problems.isEmpty, "\(push.problems)")
            #expect(push.token == job.token)
            #expect(push.headers["apns-topic"] == PushFixture.apnsTopic)
            #expect(push.headers["apns-push-type"] == "alert")
            #expect(push.headers["apns-priority"] == "10")
            #expect(push.headers["apns-collapse-id"] == "room-uid-3")
            let expiration = try #require(push.headers["apns-expiration"].flatMap(Int.init))
            #expect(expiration > Int(Date().timeIntervalSince1970))
            let payload = try push.decoded(APNsPayload.self)
            #expect(payload.aps.alert?.title == "Team")
            #expect(payload.aps.alert?.body == "Ada: hello")
            #expect(payload.aps.badge == 4)
            #expect(payload.aps.threadID == "room-uid-3")
            #expect(payload.parley.chatRoomId == "3")
            #expect(payload.parley.messageId == "99")
            #expect(payload.parley.type == "new-message")
        }
    }

    @Test func apnsRefusesATokenSignedWithAnotherKey() async throws {
        try await withFixture { fixture, _ in
            var configuration = fixture.apnsConfiguration
            configuration.key = P256.Signing.PrivateKey()
            let sender = APNsSender(configuration: configuration, client: fixture.client)
            let refused = try await sender.send(Self.job(.apns))
            #expect(refused == .rejected(reason: "InvalidProviderToken"))
        }
    }

    @Test func concurrentPushesShareOneHTTP2Connection() async throws {
        let (outcomes, opened) = try await PushFixture.with(latency: .milliseconds(200)) { fixture in
            let apns = APNsSender(configuration: fixture.apnsConfiguration, client: fixture.client)
            let outcomes = try await withThrowingTaskGroup(of: PushOutcome.self) { group in
                for index in 0..<40 { group.addTask { try await apns.send(Self.job(.apns, token: "many-\(index)")) } }
                return try await group.reduce(into: [PushOutcome]()) { $0.append($1) }
            }
            return (outcomes, fixture.client.http2ConnectionsOpened)
        }
        #expect(outcomes.count == 40 && outcomes.allSatisfy { $0 == .delivered })
        // Streams of one connection, not a connection per push (nor HTTP/1.1).
        #expect(opened == 1)
    }

    @Test func apnsReusesItsProviderToken() async throws {
        try await withFixture { fixture, senders in
            for _ in 0..<3 { _ = try await senders[.apns]!.send(Self.job(.apns)) }
            let tokens = Set(fixture.simulator.received.compactMap { $0.headers["authorization"] })
            #expect(fixture.simulator.received.count == 3)
            #expect(tokens.count == 1)
        }
    }

    @Test func expiredCredentialsAreRenewedOnceAndTheSendSucceeds() async throws {
        try await withFixture { fixture, senders in
            _ = try await senders[.apns]!.send(Self.job(.apns))
            fixture.simulator.expireProviderTokens()
            let renewed = try await senders[.apns]!.send(Self.job(.apns))
            #expect(renewed == .delivered)
            let tokens = fixture.simulator.received.compactMap { $0.headers["authorization"] }
            #expect(tokens.count == 3 && Set(tokens).count == 2)

            _ = try await senders[.fcm]!.send(Self.job(.fcm))
            fixture.simulator.revokeAccessTokens()
            let refreshed = try await senders[.fcm]!.send(Self.job(.fcm))
            #expect(refreshed == .delivered)
            #expect(fixture.simulator.tokenRequests == 2)
        }
    }

    @Test func apnsAnswersBecomeOutcomes() async throws {
        try await withFixture { fixture, senders in
            fixture.simulator.script { _, token, _ in
                switch token {
                case "gone": .unregistered
                case "bad": .badRequest
                case "slow-down": .tooManyRequests(retryAfter: 3)
                default: .serverError
                }
            }
            let apns = senders[.apns]!
            let gone = try await apns.send(Self.job(.apns, token: "gone"))
            #expect(gone == .deadToken(reason: "Unregistered"))
            let bad = try await apns.send(Self.job(.apns, token: "bad"))
            #expect(bad == .deadToken(reason: "BadDeviceToken"))
            let throttled = try await apns.send(Self.job(.apns, token: "slow-down"))
            #expect(throttled == .retry(after: .seconds(3), reason: "TooManyRequests"))
            let failed = try await apns.send(Self.job(.apns, token: "broken"))
            #expect(failed == .retry(after: nil, reason: "InternalServerError"))
        }
    }

    @Test func fcmAuthorisesWithAServiceAccountOnceAndSendsV1Messages() async throws {
        try await withFixture { fixture, senders in
            let fcm = senders[.fcm]!
            for index in 0..<3 {
                let sent = try await fcm.send(Self.job(.fcm, token: "fcm-\(index)"))
                #expect(sent == .delivered)
            }
            #expect(fixture.simulator.tokenRequests == 1)
            let push = try #require(fixture.simulator.received.first)
            #expect(push.problems.isEmpty, "\(push.problems)")
            let message = try push.decoded(FCMPayload.self).message
            #expect(message.token == "fcm-0")
            let notification = try #require(message.notification)
            #expect(notification.title == "Team")
            #expect(notification.body == "Ada: hello")
            #expect(message.data["chatRoomUid"] == "room-uid-3")
            #expect(message.data["badge"] == "4")
            #expect(message.android.collapseKey == "room-uid-3")
        }
    }

    @Test func fcmAnswersBecomeOutcomes() async throws {
        try await withFixture { fixture, senders in
            fixture.simulator.script { _, token, _ in
                switch token {
                case "gone": .unregistered
                case "bad": .badRequest
                case "slow-down": .tooManyRequests(retryAfter: 2)
                default: .serverError
                }
            }
            let fcm = senders[.fcm]!
            let gone = try await fcm.send(Self.job(.fcm, token: "gone"))
            #expect(gone == .deadToken(reason: "UNREGISTERED"))
            let bad = try await fcm.send(Self.job(.fcm, token: "bad"))
            #expect(bad == .rejected(reason: "INVALID_ARGUMENT"))
            let throttled = try await fcm.send(Self.job(.fcm, token: "slow-down"))
            #expect(throttled == .retry(after: .seconds(2), reason: "QUOTA_EXCEEDED"))
            let failed = try await fcm.send(Self.job(.fcm, token: "broken"))
            #expect(failed == .retry(after: nil, reason: "INTERNAL"))
        }
    }

    @Test func theWebhookIsSignedWithTheSharedSecret() async throws {
        try await withFixture { fixture, senders in
            let sent = try await senders[.webhook]!.send(Self.job(.webhook, token: "hook-1"))
            #expect(sent == .delivered)
            let push = try #require(fixture.simulator.received.first)
            let timestamp = try #require(push.headers["x-parley-timestamp"])
            let expected = HMAC<SHA256>.authenticationCode(
                for: Data("\(timestamp).".utf8) + push.body, using: SymmetricKey(data: Data("webhook-secret".utf8)))
            #expect(
                push.headers["x-parley-signature"] == "sha256=" + expected.map { String(format: "%02x", $0) }.joined())
            let payload = try push.decoded(WebhookPayload.self)
            #expect(payload.token == "hook-1")
            #expect(payload.badge == 4)
            fixture.simulator.script { _, _, _ in .unregistered }
            let gone = try await senders[.webhook]!.send(Self.job(.webhook))
            #expect(gone == .deadToken(reason: "HTTP 410"))
        }
    }

    @Test func idsOnlyPushesCarryNoText() async throws {
        try await withFixture { fixture, senders in
            let job = Self.job(.apns)
            let bare = PushJob(
                deviceID: job.deviceID, userID: job.userID, provider: .apns, token: job.token,
                notification: PushNotification(
                    reason: .message, roomID: 3, roomUID: "room-uid-3", title: nil, body: nil, actorID: 5,
                    messageID: 99, seq: 12, badge: 1))
            let sent = try await senders[.apns]!.send(bare)
            #expect(sent == .delivered)
            let push = try #require(fixture.simulator.received.first)
            let text = String(decoding: push.body, as: UTF8.self)
            #expect(!text.contains("Team") && !text.contains("hello"))
            #expect(text.contains("PARLEY_NEW_MESSAGE"))
        }
    }
}
