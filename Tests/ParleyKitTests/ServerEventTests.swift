import Foundation
import Testing

@testable import ParleyKit

/// The contract's payloads (asyncapi.yaml) read as ParleyKit's events.
struct ServerEventTests {
    func decode(_ json: String) throws -> ServerEvent { try ServerEvent.decode(Array(json.utf8)) }

    static let message = """
        {"id":11,"seq":3,"chatRoomId":7,"chatRoomUid":"room-uid-0123456789","sentById":2,"content":"hi","uid":"u-1",
         "type":"text","metadata":null,"attachments":[{"id":40,"name":"a.png"}],"createdAt":"2026-11-30T05:00:00.123Z",
         "editedAt":"2026-11-30T05:01:00Z","deletedAt":null,"deletedById":null,
         "replyTo":{"id":9,"seq":1,"sentById":1,"excerpt":"x","deleted":false},"replyCount":0,"mentions":[1],
         "reactions":[{"key":"👍","count":2}],"receipts":{"delivered":0,"read":0}}
        """

    @Test func aNewMessageAndAnEditCarryTheWholeMessage() throws {
        let new = try decode(#"{"type":"new-message-notification","data":\#(Self.message),"hash":"h"}"#)
        guard case .event(.new(let message)) = new else { throw Unexpected(new) }
        #expect(message.id == 11 && message.seq == 3 && message.roomID == 7 && message.senderID == 2)
        #expect(message.replyToID == 9 && message.mentions == [1] && message.attachmentIDs == [40])
        #expect(message.reactions == [ParleyReaction(key: "👍", count: 2)] && message.editedAt != nil)
        let edited = try decode(#"{"type":"message-edited","data":{"message":\#(Self.message)},"hash":"h"}"#)
        #expect(edited == .event(.edited(message)))
    }

    @Test func everyOtherEventReadsAsItsCase() throws {
        let cases: [(String, ServerEvent)] = [
            (
                #"{"type":"message-deleted","data":{"id":11,"seq":3,"chatRoomId":7,"deletedAt":"2026-11-30T05:00:00Z","deletedById":2},"hash":"h"}"#,
                .event(.deleted(messageID: 11, seq: 3, roomID: 7, at: Date(timeIntervalSince1970: 1_796_014_800)))
            ),
            (
                #"{"type":"reaction-changed","data":{"messageId":11,"chatRoomId":7,"key":"👍","userId":2,"added":true,"count":1},"hash":"h"}"#,
                .event(.reaction(messageID: 11, roomID: 7, key: "👍", userID: 2, added: true, count: 1))
            ),
            (
                #"{"type":"read-message-notification","data":{"messageId":11,"seq":3,"userId":2,"chatRoomId":7,"readAt":"2026-11-30T05:00:00Z"},"hash":"h"}"#,
                .event(.read(roomID: 7, userID: 2, seq: 3))
            ),
            (
                #"{"type":"creating-message-info","data":{"userId":2,"chatRoomId":7,"creating":true,"time":"2026-11-30T05:00:00Z"},"hash":"h"}"#,
                .event(.typing(roomID: 7, userID: 2, creating: true))
            ),
            (
                #"{"type":"chatroom-change-notification","data":{"editById":2,"chatRoomId":7,"change":"renamed"},"hash":"h"}"#,
                .event(.roomChanged(roomID: 7, change: "renamed"))
            ),
            (
                #"{"type":"message-rejected","data":{"chatRoomId":7,"uid":"u-1","code":"rate-limited","reason":"slow down","retryAfter":2},"hash":"h"}"#,
                .event(
                    .rejected(
                        ParleyRejection(roomID: 7, uid: "u-1", code: "rate-limited", reason: "slow down", retryAfter: 2)
                    ))
            ),
            (
                #"{"type":"room-summary","data":{"chatRoomId":7,"seq":9,"message":null,"unreadCount":4,"unreadMentionCount":1},"hash":"h"}"#,
                .summary(roomID: 7, seq: 9, unread: 4, unreadMentions: 1)
            ),
            (
                #"{"type":"notification-cleared","data":{"chatRoomId":7,"readSeq":9},"hash":"h"}"#,
                .cleared(roomID: 7, readSeq: 9)
            ),
            (
                #"{"type":"online-user-message","data":{"online":true,"lastActivity":"2026-11-30T05:00:00Z"},"hash":"h"}"#,
                .other
            ),
        ]
        for (json, expected) in cases { #expect(try decode(json) == expected, "\(json)") }
    }

    /// The envelope's hash comes with its event from one read (repeats of other events are
    /// dropped by it); an envelope without one reads as nil.
    @Test func anEventIsReadWithItsEnvelopesHash() throws {
        let typing = #"{"type":"creating-message-info","data":{"userId":2,"chatRoomId":7,"creating":true},"hash":"#
        let hashed = try ServerEvent.read(Array((typing + #""h-42"}"#).utf8))
        #expect(hashed.event == .event(.typing(roomID: 7, userID: 2, creating: true)) && hashed.hash == "h-42")
        let bare = #"{"type":"notification-cleared","data":{"chatRoomId":7,"readSeq":9}}"#
        #expect(try ServerEvent.read(Array(bare.utf8)).hash == nil)
    }

    @Test func aPayloadThatIsNotTheContractsIsRefused() {
        #expect(throws: (any Error).self) { try decode("not json") }
        #expect(throws: (any Error).self) {
            try decode(#"{"type":"message-deleted","data":{"id":"eleven"},"hash":"h"}"#)
        }
    }

    struct Unexpected: Error {
        let event: ServerEvent
        init(_ event: ServerEvent) { self.event = event }
    }
}

/// A pending message resolves once: the first outcome wins, and every waiter gets it.
struct OutgoingMessageTests {
    @Test func theFirstOutcomeWinsForEveryWaiter() async throws {
        let outgoing = ParleyOutgoingMessage(uid: "u", roomID: 7, content: "hi")
        let waiters = (0..<2).map { _ in Task { try await outgoing.stored() } }
        try await Task.sleep(for: .milliseconds(50))
        let rejection = ParleyRejection(roomID: 7, uid: "u", code: "blocked", reason: "blocked")
        #expect(outgoing.settle(.rejected(rejection)))
        #expect(!outgoing.settle(.pending))
        for waiter in waiters {
            await #expect(throws: rejection) { try await waiter.value }
        }
        #expect(outgoing.state == .rejected(rejection))
    }

    /// Signed out before the server answered: the waiter is told so, not left waiting.
    @Test func anAbandonedMessageThrowsSignedOut() async {
        let outgoing = ParleyOutgoingMessage(uid: "u", roomID: 7, content: "hi")
        let waiter = Task { try await outgoing.stored() }
        outgoing.settle(.abandoned)
        await #expect(throws: ParleyClientError.signedOut) { try await waiter.value }
    }
}
