import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// A blocked user's messages push nothing to the blocker, in any room.
extension PushDeliveryTests {
    @Test func aBlockedSenderPushesNothingToTheBlocker() async throws {
        try await withPipeline { pipeline in
            let client = pipeline.client
            let tag = UUID().uuidString.prefix(6)
            let sender = try await client.signUp(device: Self.device(.apns, "sender-\(tag)"))
            let blocker = try await client.signUp(device: Self.device(.apns, "blocker-\(tag)"))
            let other = try await client.signUp(device: Self.device(.fcm, "other-\(tag)"))
            let room = try await client.createRoom(
                by: sender, members: [(blocker, "writer"), (other, "writer")], name: "Group",
                firstMessage: ("first", "k-1"))
            _ = try await pipeline.push.received(atLeast: 2)
            #expect(
                try await client.json(.put, "/v1/me/blocks/\(userID(sender))", token: token(blocker)).status
                    == .noContent)
            let blocked = try await client.send("hello", uid: "k-2", to: Int(room.id), as: sender)
            _ = try await pipeline.push.received(atLeast: 3)
            try await pipeline.drained()
            try await Task.sleep(for: .milliseconds(800))
            #expect(
                Set(Self.pushes(pipeline.push, type: "new-message", messageID: Int(blocked.id)).keys) == [
                    "other-\(tag)"
                ])

            #expect(
                try await client.json(.delete, "/v1/me/blocks/\(userID(sender))", token: token(blocker)).status
                    == .noContent)
            let unblocked = try await client.send("again", uid: "k-3", to: Int(room.id), as: sender)
            _ = try await pipeline.push.received(atLeast: 5)
            #expect(
                Set(Self.pushes(pipeline.push, type: "new-message", messageID: Int(unblocked.id)).keys)
                    == ["other-\(tag)", "blocker-\(tag)"])
        }
    }
}
