import Foundation

/// The app's backend asked about messages before they are stored (`PARLEY_MESSAGE_HOOK_URL`):
/// each is allowed, rejected (`rejected-by-policy`) or replaced. See <doc:MessageHook>.
public protocol MessageHook: Sendable {
    /// One verdict per message, in order; throws when the hook did not answer in time or
    /// answered something else.
    func review(_ messages: [HookedMessage]) async throws -> [MessageVerdict]
}

/// A message as the hook sees it.
public struct HookedMessage: Sendable, Equatable, Encodable {
    public let uid: String
    public let chatRoomId: Int64
    /// None for a notice of the app's server.
    @NullEncoded public var sentById: Int64?
    public let content: String
    public let type: MessageType
    @NullEncoded public var metadata: MessageMetadata?
    /// An edit of a stored message rather than a new one.
    public let edit: Bool

    public init(
        uid: String, chatRoomId: Int64, sentById: Int64?, content: String, type: MessageType,
        metadata: MessageMetadata?, edit: Bool
    ) {
        self.uid = uid
        self.chatRoomId = chatRoomId
        self.sentById = sentById
        self.content = content
        self.type = type
        self.metadata = metadata
        self.edit = edit
    }
}

/// What the hook says of one message.
public enum MessageVerdict: Sendable, Equatable {
    case allow
    case reject(reason: String)
    /// New content, and new metadata when given (`.some(nil)` removes it).
    case replace(content: String, metadata: MessageMetadata??)
}

/// The hook as the send and edit paths use it: its verdicts applied, its failures (no answer
/// within its time, an answer of another shape) as `PARLEY_MESSAGE_HOOK_FAILURE` says.
public struct MessageHookGate: Sendable {
    public enum Failure: String, Sendable {
        /// The messages go on as sent.
        case allow
        /// The messages are rejected (`rejected-by-policy`).
        case reject
    }

    let hook: any MessageHook
    let failure: Failure

    public init(hook: any MessageHook, failure: Failure) {
        self.hook = hook
        self.failure = failure
    }

    static func rejection(_ reason: String) -> ParleyError {
        ParleyError(.rejectedByPolicy, reason)
    }

    /// Each send as the hook leaves it, or why it is refused.
    func review(_ batch: [MessageSubmission]) async -> [Result<MessageSubmission, ParleyError>] {
        let asked = batch.map { submission in
            HookedMessage(
                uid: submission.message.uid, chatRoomId: submission.roomID,
                sentById: submission.isNotice ? nil : submission.senderID, content: submission.message.content,
                type: submission.message.type, metadata: submission.message.metadata, edit: false)
        }
        let verdicts = await verdicts(asked)
        return zip(batch, verdicts).map { submission, verdict in
            switch verdict {
            case .allow: return .success(submission)
            case .reject(let reason): return .failure(Self.rejection(reason))
            case .replace(let content, let metadata):
                let message = submission.message
                do {
                    let replaced = try NewMessage(
                        content: content, uid: message.uid, replyToId: message.replyToId, mentions: message.mentions,
                        type: message.type, metadata: metadata ?? message.metadata, attachments: message.attachments)
                    return .success(
                        MessageSubmission(
                            roomID: submission.roomID, senderID: submission.senderID, message: replaced,
                            traceparent: submission.traceparent))
                } catch {
                    return .failure(Self.rejection("The message hook's replacement is not a valid message."))
                }
            }
        }
    }

    /// One send as the hook leaves it; its refusal throws.
    func reviewed(_ submission: MessageSubmission) async throws -> MessageSubmission {
        try await review([submission])[0].get()
    }

    /// An edit's content and metadata as the hook leaves them, or its refusal.
    func review(edit content: String, metadata: MessageMetadata??, of message: Message, by editorID: Int64)
        async throws -> (content: String, metadata: MessageMetadata??)
    {
        let asked = HookedMessage(
            uid: message.uid, chatRoomId: message.chatRoomId, sentById: editorID, content: content,
            type: message.type, metadata: metadata ?? message.metadata, edit: true)
        switch await verdicts([asked])[0] {
        case .allow: return (content, metadata)
        case .reject(let reason): throw Self.rejection(reason)
        case .replace(let replaced, let newMetadata): return (replaced, newMetadata ?? metadata)
        }
    }

    private func verdicts(_ asked: [HookedMessage]) async -> [MessageVerdict] {
        do {
            let verdicts = try await hook.review(asked)
            guard verdicts.count == asked.count else { throw HookAnswerMismatch() }
            return verdicts
        } catch {
            return asked.map { _ in
                failure == .allow ? .allow : .reject(reason: "The message hook did not answer; try again later.")
            }
        }
    }

    struct HookAnswerMismatch: Error {}
}
