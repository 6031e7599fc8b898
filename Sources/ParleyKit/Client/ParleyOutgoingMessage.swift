import NIOConcurrencyHelpers

/// A message on its way: pending until the server stored it (its canonical event, or the
/// REST send's answer) or refused it.
public final class ParleyOutgoingMessage: Sendable, Identifiable {
    /// The message's uid, the same on every way and every retry: the server stores it once.
    public let uid: String
    public let roomID: Int
    public let content: String
    /// The ids of the files it carries.
    public let attachments: [Int]

    public enum State: Sendable, Hashable {
        case pending
        case stored(ParleyMessage)
        case rejected(ParleyRejection)
        /// The session ended first: the server may or may not have it. Sending it again with
        /// the same uid after signing in stores it once either way.
        case abandoned
    }

    private let outcome = NIOLockedValueBox<(state: State, waiting: [CheckedContinuation<State, Never>])>(
        (.pending, []))

    public var id: String { uid }

    init(uid: String, roomID: Int, content: String, attachments: [Int] = []) {
        self.uid = uid
        self.roomID = roomID
        self.content = content
        self.attachments = attachments
    }

    public var state: State { outcome.withLockedValue { $0.state } }

    /// The stored message, once stored; throws the ``ParleyRejection`` when refused, and
    /// ``ParleyClientError/signedOut`` when the session ended first.
    public func stored() async throws -> ParleyMessage {
        let state = await withCheckedContinuation { continuation in
            let settled = outcome.withLockedValue { outcome -> State? in
                if case .pending = outcome.state {
                    outcome.waiting.append(continuation)
                    return nil
                }
                return outcome.state
            }
            if let settled { continuation.resume(returning: settled) }
        }
        switch state {
        case .stored(let message): return message
        case .rejected(let rejection): throw rejection
        case .abandoned: throw ParleyClientError.signedOut
        case .pending: preconditionFailure("resumed while pending")
        }
    }

    /// Settles the message; the first outcome wins. Returns whether this one did.
    @discardableResult
    func settle(_ state: State) -> Bool {
        let waiting = outcome.withLockedValue { outcome -> [CheckedContinuation<State, Never>]? in
            guard case .pending = outcome.state else { return nil }
            outcome.state = state
            defer { outcome.waiting = [] }
            return outcome.waiting
        }
        for continuation in waiting ?? [] { continuation.resume(returning: state) }
        return waiting != nil
    }

    var isPending: Bool { if case .pending = state { true } else { false } }
}
