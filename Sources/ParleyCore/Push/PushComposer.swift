import Foundation

/// Turns a fan-out's push intent into one notification per recipient device.
public struct PushComposer: Sendable {
    /// What a push may reveal.
    public enum Content: String, Sendable, CaseIterable {
        /// Room, sender and the start of the message.
        case preview
        /// Identifiers only: the app fetches the rest (nothing readable passes the providers).
        case ids
    }

    public let content: Content
    public let policy: PushPolicy
    /// Longest preview, in characters.
    public let previewLength: Int

    public init(content: Content = .preview, policy: PushPolicy = PushPolicy(), previewLength: Int = 180) {
        self.content = content
        self.policy = policy
        self.previewLength = previewLength
    }

    /// Jobs for the recipients who should be pushed now (never the actor).
    public func jobs(
        for intent: PushIntent, roomID: Int64, context: PushRoomContext, recipients: [PushRecipient], at now: Date,
        traceparent: String? = nil
    ) -> [PushJob] {
        recipients.filter { $0.userID != intent.actorID }
            .filter {
                policy.allows(
                    room: $0.room, quietHours: $0.quietHours, at: now, mentioned: intent.mentions($0.userID))
            }
            .map { recipient in
                let (title, body) = text(for: intent, context: context)
                return PushJob(
                    deviceID: recipient.deviceID, userID: recipient.userID, provider: recipient.provider,
                    token: recipient.token,
                    notification: PushNotification(
                        reason: intent.reason, roomID: roomID, roomUID: context.roomUID, title: title, body: body,
                        actorID: intent.actorID, messageID: intent.messageID, seq: intent.seq,
                        badge: recipient.unread, mention: intent.mentions(recipient.userID)),
                    traceparent: traceparent)
            }
    }

    /// A read's silent update for each of the reader's devices: no text, the room read up to
    /// `seq` and the badge as it stands (no mute or quiet hours hold back what shows nothing).
    public func readJobs(roomID: Int64, roomUID: String, seq: Int64, devices: [PushRecipient]) -> [PushJob] {
        devices.map { device in
            PushJob(
                deviceID: device.deviceID, userID: device.userID, provider: device.provider, token: device.token,
                notification: PushNotification(
                    reason: .read, roomID: roomID, roomUID: roomUID, title: nil, body: nil, actorID: device.userID,
                    messageID: nil, seq: seq, badge: device.unread))
        }
    }

    func text(for intent: PushIntent, context: PushRoomContext) -> (title: String?, body: String?) {
        guard content == .preview else { return (nil, nil) }
        let actor = context.actorName ?? "Someone"
        switch intent.reason {
        case .message:
            let preview = self.preview(intent.content ?? "")
            // Actor 0: a notice of the app's server, said by no member.
            guard intent.actorID != 0 else { return (context.roomName ?? "Parley", preview) }
            if context.twoParty { return (actor, preview) }
            return (context.roomName ?? "New message", "\(actor): \(preview)")
        case .added:
            let room = context.roomName.map { "“\($0)”" } ?? (context.twoParty ? "a conversation" : "a room")
            // Actor 0: an administrator's change of groups or roles, made by no member.
            guard intent.actorID != 0 else { return (context.roomName ?? "Parley", "You were added to \(room)") }
            return (context.roomName ?? actor, "\(actor) added you to \(room)")
        case .read:
            return (nil, nil)
        }
    }

    func preview(_ content: String) -> String {
        let flat = content.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard flat.count > previewLength else { return flat }
        return flat.prefix(previewLength - 1) + "…"
    }
}
