import Foundation
import NIOCore

extension ParleyClient {
    /// Sends `content` to the room. The message is pending at once and goes out in the order
    /// of the calls: published on `chat-in`, or, when the broker cannot take it, through the
    /// REST send with the same uid (which the server stores once); it resolves with the stored
    /// message or the server's refusal (``ParleyOutgoingMessage/stored()``).
    ///
    /// - Parameters:
    ///   - attachments: the ids of files this user uploaded (``upload(_:name:protected:progress:)``),
    ///     up to 10, in the order shown.
    ///   - uid: the message's id for every retry; a new one by default.
    public func send(
        _ content: String, in roomID: Int, attachments: [Int] = [], uid: String = UUID().uuidString
    ) throws -> ParleyOutgoingMessage {
        let session = try signedIn()
        guard rooms[roomID] != nil else { throw ParleyClientError.unknownRoom(roomID) }
        let outgoing = ParleyOutgoingMessage(uid: uid, roomID: roomID, content: content, attachments: attachments)
        pending[uid] = outgoing
        session.outbox.yield(outgoing)
        return outgoing
    }

    /// Publishes one message of the outbox, which waits for its PUBACK before the next (MQTT
    /// keeps a connection's order; the ingest keeps a room's).
    func deliver(_ outgoing: ParleyOutgoingMessage) async {
        guard let session, outgoing.isPending, let room = rooms[outgoing.roomID] else { return }
        let input = NewMessageInput(
            type: "new-message-notification",
            data: .init(
                chatRoomId: outgoing.roomID, content: outgoing.content, uid: outgoing.uid,
                attachments: outgoing.attachments.isEmpty ? nil : outgoing.attachments),
            hash: outgoing.uid)
        guard let payload = try? ContractJSON.encoder.encode(input) else { return }
        let publication = MQTTPacket.Publish(
            topic: "chat-in/\(room.uid)", payload: ByteBuffer(bytes: payload), qos: .atLeastOnce)
        // 0x10: no ingest took it; 0x80 and above: refused (the plugin holds chat-in while no
        // ingest can take it). Either way, and without a connection, REST stores it.
        if let reason = try? await session.link.publish(publication), reason < 0x80, reason != 0x10 {
            let wait = confirmationTimeout
            Task { [weak self] in
                try? await Task.sleep(for: wait)
                await self?.sendOverREST(outgoing)
            }
            return
        }
        await sendOverREST(outgoing)
    }

    /// The REST send with the message's uid: stores it, or answers the stored one again. A
    /// `Retry-After` of up to 30 s is waited out twice; a connection failure is tried again
    /// after 1, 2 and 4 s.
    func sendOverREST(_ outgoing: ParleyOutgoingMessage) async {
        for attempt in 0..<4 {
            guard let rest = session?.rest, outgoing.isPending else { return }
            do {
                let body = Components.Schemas.NewMessage(
                    content: outgoing.content, uid: outgoing.uid,
                    attachments: outgoing.attachments.isEmpty ? nil : outgoing.attachments)
                let answer = try await rest.postV1RoomsIdMessages(path: .init(id: outgoing.roomID), body: .json(body))
                let stored: Components.Schemas.Message
                switch answer {
                case .ok(let ok): stored = try ok.body.json
                case .created(let created): stored = try created.body.json
                default: continue
                }
                let message = ParleyMessage(stored)
                pending[outgoing.uid] = nil
                outgoing.settle(.stored(message))
                await take(message)
                return
            } catch {
                // No answer: the connection failed; tried again after a pause.
                guard let problem = ParleyProblem.of(error) else {
                    try? await Task.sleep(for: .seconds(1 << attempt))
                    continue
                }
                if let wait = problem.retryAfter, wait <= 30, attempt < 2 {
                    try? await Task.sleep(for: .seconds(wait))
                    continue
                }
                refuse(
                    outgoing,
                    ParleyRejection(
                        roomID: outgoing.roomID, uid: outgoing.uid, code: problem.code, reason: problem.detail,
                        retryAfter: problem.retryAfter))
                return
            }
        }
        refuse(
            outgoing,
            ParleyRejection(
                roomID: outgoing.roomID, uid: outgoing.uid, code: "unavailable",
                reason: "The server could not be reached; send it again."))
    }

    /// A `message-rejected`: for a pending message, its outcome; a refusal to be tried again
    /// (`unavailable`, `rate-limited`) goes through the REST send, which waits as told.
    func rejected(_ rejection: ParleyRejection) async {
        if let uid = rejection.uid, let outgoing = pending[uid] {
            if rejection.code == "unavailable" || rejection.code == "rate-limited" {
                await sendOverREST(outgoing)
                return
            }
            refuse(outgoing, rejection)
        } else {
            events.send(.rejected(rejection))
        }
    }

    private func refuse(_ outgoing: ParleyOutgoingMessage, _ rejection: ParleyRejection) {
        pending[outgoing.uid] = nil
        if outgoing.settle(.rejected(rejection)) { events.send(.rejected(rejection)) }
    }
}

/// A `new-message-notification` for `chat-in`.
private struct NewMessageInput: Encodable {
    struct Body: Encodable {
        let chatRoomId: Int
        let content: String
        let uid: String
        /// Left out when none.
        let attachments: [Int]?
    }

    let type: String
    let data: Body
    let hash: String
}
