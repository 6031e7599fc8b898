import Foundation

/// The message hook on the send path (<doc:MessageHook>).
extension RoomService {
    /// Stores a batch through the message hook, when there is one: its refusals are answered
    /// at once, the rest go on as it left them, in one request for the whole batch.
    static func send(
        _ batch: [MessageSubmission], rooms: any RoomRepository, messages: any MessageRepository,
        hook: MessageHookGate?
    ) async throws -> [SendOutcome] {
        guard let hook else { return try await send(batch, rooms: rooms, messages: messages) }
        let reviewed = await hook.review(batch)
        var outcomes: [SendOutcome?] = reviewed.map { result in
            guard case .failure(let refusal) = result else { return nil }
            return .failure(refusal)
        }
        let passed = reviewed.indices.compactMap { index -> (Int, MessageSubmission)? in
            guard case .success(let submission) = reviewed[index] else { return nil }
            return (index, submission)
        }
        if !passed.isEmpty {
            let stored = try await send(passed.map(\.1), rooms: rooms, messages: messages)
            for ((index, _), outcome) in zip(passed, stored) { outcomes[index] = outcome }
        }
        return outcomes.map { $0 ?? .failure(ParleyError.notFound("No such room.")) }
    }
}
