import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Notification levels: `mentions` pushes only what names the member, `none` nothing; edits
/// and deletions push nobody.
extension PushDeliveryTests {
    @Test func aMentionPushesThroughLevelMentionsButNotThroughNone() async throws {
        try await withPipeline { pipeline in
            let client = pipeline.client
            let tag = UUID().uuidString.prefix(6)
            let sender = try await client.signUp(device: Self.device(.apns, "s-\(tag)"))
            let everything = try await client.signUp(device: Self.device(.apns, "all-\(tag)"))
            let mentionsOnly = try await client.signUp(device: Self.device(.fcm, "mentions-\(tag)"))
            let nothing = try await client.signUp(device: Self.device(.apns, "none-\(tag)"))
            let room = try await client.createRoom(
                by: sender, members: [everything, mentionsOnly, nothing].map { ($0, "writer") }, name: "Levels",
                firstMessage: ("first", "l-1"))
            _ = try await pipeline.push.received(atLeast: 3)
            let settings = "/v1/rooms/\(room.id)/notifications"
            let levels = try await client.json(
                .put, settings, token: token(mentionsOnly), body: #"{"level":"mentions"}"#)
            #expect(levels.status == .ok && levels.json["level"] as? String == "mentions")
            #expect(levels.json["muted"] as? Bool == false)
            #expect(
                try await client.json(.put, settings, token: token(nothing), body: #"{"level":"none"}"#).status == .ok)
            #expect(
                try await client.json(.put, settings, token: token(nothing), body: #"{"level":"loud"}"#).status
                    == .badRequest)
            #expect(try await client.json(.get, settings, token: token(nothing)).json["level"] as? String == "none")

            let plain = try await client.send("plain", uid: "l-2", to: Int(room.id), as: sender)
            let mention = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(room.id)/messages", token: token(sender),
                body:
                    #"{"content":"@all","uid":"l-3","mentions":[\#(userID(everything)),\#(userID(mentionsOnly)),\#(userID(nothing))]}"#
            )
            _ = try await pipeline.push.received(atLeast: 6)
            // Edits and deletions push nobody, even an edit that adds a mention.
            _ = try await client.json(
                .patch, "/v1/rooms/\(room.id)/messages/\(plain.id)", token: token(sender),
                body: #"{"content":"plain!","mentions":[\#(userID(mentionsOnly))]}"#)
            _ = try await client.json(.delete, "/v1/rooms/\(room.id)/messages/\(mention.id)", token: token(sender))
            try await pipeline.drained()
            try await Task.sleep(for: .milliseconds(800))

            let plainPushes = Self.pushes(pipeline.push, type: "new-message", messageID: Int(plain.id))
            #expect(Set(plainPushes.keys) == ["all-\(tag)"])
            let mentionPushes = Self.pushes(pipeline.push, type: "new-message", messageID: Int(mention.id))
            #expect(Set(mentionPushes.keys) == ["all-\(tag)", "mentions-\(tag)"])
            #expect(pipeline.push.simulator.received.count == 6)

            // The mentioned are told so (FCM data is strings; APNs says `parley.mention: true`).
            let fcm = try #require(mentionPushes["mentions-\(tag)"])
            #expect(try fcm.decoded(FCMPayload.self).message.data["mention"] == "true")
            let apns = try #require(mentionPushes["all-\(tag)"])
            #expect(try apns.decoded(APNsPayload.self).parley.mention == true)
            let plainAPNs = try #require(plainPushes["all-\(tag)"])
            // Left out, not false or null.
            let plainKeys = try plainAPNs.decoded([String: WireKeys].self)["parley"]?.keys
            #expect(plainKeys?.contains("mention") == false)
        }
    }
}
