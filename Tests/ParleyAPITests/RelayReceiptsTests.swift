import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// A new message's event carries receipts while its room is within the limit, and none once
/// the room grows past it: the relay's answer per room follows every membership change.
extension BrokerPluginTests {
    @Test func aNewMessagesEventHasReceiptsOnlyWhileItsRoomIsWithinTheLimit() async throws {
        let broker = try await withBroker(relay: true, receiptsMaxMembers: 3) { api, broker, _ in
            let users = try await api.signUp(count: 4)
            let (roomID, uid) = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")])
            let listener = try await connected(try mqtt(broker, login: users[1]))
            try await listener.subscribe(Topic.room(uid))
            func event(_ content: String) async throws -> Message? {
                try await api.send(content, uid: content, to: roomID, as: users[0])
                return await envelope(listener, "new-message-notification", of: Message.self) { $0.uid == content }?
                    .data
            }
            func member(_ method: HTTPRequest.Method) async throws {
                let answer = try await api.json(
                    method, "/v1/rooms/\(roomID)/members/\(userID(users[3]))", token: token(users[0]),
                    body: method == .put ? #"{"role":"reader"}"# : nil)
                #expect((200..<300).contains(answer.status.code), "\(answer.text)")
            }

            #expect(try await event("three")?.receipts == MessageReceipts.none)
            #expect(try await event("three-again")?.receipts == MessageReceipts.none)
            try await member(.put)
            let four = try #require(try await event("four"))
            #expect(four.receipts == nil)
            try await member(.delete)
            #expect(try await event("three-once-more")?.receipts == MessageReceipts.none)
            await listener.shutdown()
        }
        await broker.stop()
    }
}
