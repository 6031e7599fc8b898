import Foundation
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Message actions as MQTT clients see them, through mosquitto with Parley's plugin, the
/// outbox relay and the ingest.
extension BrokerPluginTests {
    @Test func everyMessageActionReachesTheRoomTopicAndChatInCarriesRepliesAndMentions() async throws {
        let broker = try await withBroker(relay: true, ingest: true) { api, broker in
            let users = try await api.signUp(count: 3)
            let (admin, writer, reader) = (users[0], users[1], users[2])
            let (roomID, uid) = try await api.multipartyRoom(
                by: admin, members: [(writer, "writer"), (reader, "reader")], name: "Acts")
            let first = try #require(try await api.history(roomID, as: admin).messages.first)
            let sender = try await connected(try mqtt(broker, login: writer))
            let listener = try await connected(try mqtt(broker, login: reader))
            try await sender.subscribe(Topic.notifications(userID(writer)))
            try await listener.subscribe(Topic.room(uid))

            // A reply with a mention, over chat-in.
            try await sender.publish(
                topic: "chat-in/\(uid)",
                string:
                    #"{"type":"new-message-notification","data":{"content":"@reader see","uid":"a-1","replyToId":\#(first.id),"mentions":[\#(userID(reader))]},"hash":"a1"}"#
            )
            let reply = try #require(
                await envelope(listener, "new-message-notification", of: Message.self) { $0.uid == "a-1" }
            ).data
            #expect(reply.replyTo?.id == first.id && reply.replyTo?.excerpt == first.content)
            #expect(reply.mentions == [userID(reader)] && reply.reactions.isEmpty && reply.editedAt == nil)
            // A reply to a message of no room of theirs is refused, naming the field.
            try await sender.publish(
                topic: "chat-in/\(uid)",
                string:
                    #"{"type":"new-message-notification","data":{"content":"x","uid":"a-2","replyToId":999999999},"hash":"a2"}"#
            )
            let refused = try #require(await rejection(sender))
            #expect(refused.code == .invalidRequest && refused.uid == "a-2" && refused.reason.contains("replyToId"))

            // A reaction, then an edit: the edited message carries the reaction, without `me`.
            let path = "/v1/rooms/\(roomID)/messages/\(reply.id)"
            #expect(try await api.json(.put, "\(path)/reactions/:ok:", token: token(admin)).status == .noContent)
            let reacted = try #require(
                await envelope(listener, "reaction-changed", of: RoomEvent.ReactionChanged.self) {
                    $0.messageId == reply.id
                }
            ).data
            #expect(reacted.key == ":ok:" && reacted.userId == userID(admin) && reacted.added && reacted.count == 1)
            #expect(reacted.chatRoomId == Int64(roomID))

            #expect(
                try await api.json(.patch, path, token: token(writer), body: #"{"content":"@reader look"}"#).status
                    == .ok)
            var raw: String?
            for _ in 0..<20 {
                guard let message = await next(listener, within: .seconds(3)) else { break }
                let text = String(decoding: message.payload, as: UTF8.self)
                if text.contains(#""type":"message-edited""#) {
                    raw = text
                    break
                }
            }
            let text = try #require(raw)
            let edited = try JSONCoding.decoder.decode(Envelope<RoomEvent.Edited>.self, from: Data(text.utf8))
            #expect(edited.data.message.content == "@reader look" && edited.data.message.editedAt != nil)
            #expect(edited.data.message.seq == reply.seq && edited.data.message.replyTo?.id == first.id)
            #expect(text.contains(#""reactions":[{"count":1,"key":":ok:"}]"#))

            #expect(try await api.json(.delete, path, token: token(admin)).status == .noContent)
            let deleted = try #require(
                await envelope(listener, "message-deleted", of: RoomEvent.Deleted.self) { $0.id == reply.id }
            ).data
            #expect(deleted.seq == reply.seq && deleted.chatRoomId == Int64(roomID))
            #expect(deleted.deletedById == userID(admin))
            for client in [sender, listener] { await client.shutdown() }
        }
        await broker.stop()
    }
}
