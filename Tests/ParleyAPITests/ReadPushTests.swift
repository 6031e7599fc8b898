import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyPushSimulator
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// A read moves every device of the reader: a silent push through APNs (background), FCM (a
/// data message) and the webhook provider, with the badge as it stands, at most one per device
/// and room per interval and the last read always told.
extension PushDeliveryTests {
    /// The read pushes received so far, by token, in order.
    static func readPushes(_ fixture: PushFixture) -> [String: [ReceivedPush]] {
        var found: [String: [ReceivedPush]] = [:]
        for push in fixture.simulator.received where push.answer == .success && Self.ids(push).type == "read" {
            found[push.token, default: []].append(push)
        }
        return found
    }

    @Test func aReadSilentlyUpdatesEveryDeviceOfTheReaderOncePerIntervalWithTheLastRead() async throws {
        try await withPipeline(readPushInterval: .seconds(2)) { pipeline in
            let client = pipeline.client
            let tag = UUID().uuidString.prefix(6)
            let email = "reader-\(tag)@example.com"
            let reader = try await client.signUp(email: email, device: Self.device(.apns, "r-ios-\(tag)"))
            for device in [Self.device(.fcm, "r-android-\(tag)"), Self.device(.webhook, "r-hook-\(tag)")] {
                _ = try await client.decoded(
                    LoginResponse.self, .post, "/v1/auth/login",
                    body: #"{"email":"\#(email)","password":"correct horse","device":\#(device)}"#)
            }
            let sender = try await client.signUp()
            let room = try await client.decoded(
                RoomResponse.self, .put, "/v1/rooms/direct/\(userID(sender))", token: token(reader))
            for index in 1...3 { try await client.send("m\(index)", uid: "m-\(index)", to: Int(room.id), as: sender) }
            // Each message to each of the reader's three devices.
            let messagePushes = try await pipeline.push.received(atLeast: 9).count
            #expect(messagePushes == 9)

            func read(_ seq: Int) async throws {
                let answer = try await client.json(
                    .post, "/v1/rooms/\(room.id)/read", token: token(reader), body: #"{"seq":\#(seq)}"#)
                #expect(answer.status == .ok)
            }
            // Three reads at once: the first goes now, the last after the interval.
            try await read(1)
            _ = try await pipeline.push.received(atLeast: messagePushes + 3)
            try await read(2)
            try await read(3)
            try await Task.sleep(for: .milliseconds(1000))
            var reads = Self.readPushes(pipeline.push)
            let tokens = ["r-ios-\(tag)", "r-android-\(tag)", "r-hook-\(tag)"]
            #expect(Set(reads.keys) == Set(tokens))
            #expect(reads.values.allSatisfy { $0.count == 1 })
            _ = try await pipeline.push.received(atLeast: messagePushes + 6, within: .seconds(5))
            reads = Self.readPushes(pipeline.push)
            #expect(tokens.allSatisfy { reads[$0]?.count == 2 })
            #expect(pipeline.push.simulator.received.allSatisfy { $0.problems.isEmpty })

            // APNs: a background push, not collapsed with the alerts, the badge as it stands.
            let first = try #require(reads["r-ios-\(tag)"]?.first)
            #expect(first.headers["apns-push-type"] == "background" && first.headers["apns-priority"] == "5")
            #expect(first.headers["apns-collapse-id"] == nil)
            let apns = try first.decoded(APNsPayload.self)
            #expect(apns.aps.contentAvailable == 1 && apns.aps.alert == nil)
            #expect(apns.aps.badge == 2)
            #expect(apns.parley.chatRoomId == "\(room.id)" && apns.parley.seq == "1")
            let last = try #require(reads["r-ios-\(tag)"]?.last).decoded(APNsPayload.self)
            #expect(last.aps.badge == 0 && last.parley.seq == "3")

            // FCM: a data message with the room, seq and badge; nothing shown.
            let fcm = try #require(reads["r-android-\(tag)"]?.last).decoded(FCMPayload.self).message
            #expect(fcm.notification == nil)
            #expect(fcm.data["type"] == "read" && fcm.data["chatRoomId"] == "\(room.id)")
            #expect(fcm.data["badge"] == "0" && fcm.data["seq"] == "3")
            #expect(fcm.android.collapseKey == nil)

            // The webhook provider: the same data.
            let hook = try #require(reads["r-hook-\(tag)"]?.last).decoded(WebhookPayload.self)
            #expect(hook.data["type"] == "read" && hook.badge == 0 && hook.data["seq"] == "3")

            // The sender's own message moves their marker without a read: nothing is pushed.
            #expect(Self.readPushes(pipeline.push).keys.allSatisfy { tokens.contains($0) })
        }
    }
}
