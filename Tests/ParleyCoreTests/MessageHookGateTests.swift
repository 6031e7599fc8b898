import Foundation
import ParleyCore
import Synchronization
import Testing

/// The message hook over the in-memory rooms: one request per batch, each verdict applied to
/// its own message, and a hook that fails taken as `PARLEY_MESSAGE_HOOK_FAILURE` says.
struct MessageHookGateTests {
    final class Hook: MessageHook {
        let calls = Mutex<[[HookedMessage]]>([])
        let failing: Bool

        init(failing: Bool = false) { self.failing = failing }

        func review(_ messages: [HookedMessage]) async throws -> [MessageVerdict] {
            calls.withLock { $0.append(messages) }
            if failing { throw CancellationError() }
            return messages.map { message in
                if message.content.hasPrefix("no") { return .reject(reason: "no thanks") }
                if message.content.hasPrefix("swap") { return .replace(content: "swapped", metadata: nil) }
                if message.content.hasPrefix("bad") { return .replace(content: "", metadata: nil) }
                return .allow
            }
        }
    }

    let rooms = InMemoryRooms()

    func service(_ hook: Hook, failure: MessageHookGate.Failure = .allow) -> RoomService {
        RoomService(
            rooms: rooms, messages: rooms, batching: nil, hook: MessageHookGate(hook: hook, failure: failure))
    }

    func room(_ service: RoomService) async throws -> Int64 {
        try await service.create(by: 1, name: "R", members: [(2, .writer), (3, .reader)], firstMessage: nil).id
    }

    @Test func aBatchIsOneRequestAndEachVerdictItsMessagesOwn() async throws {
        let hook = Hook()
        let service = service(hook)
        let room = try await room(service)
        let batch = try ["yes", "no way", "swap this", "bad one"].enumerated().map { index, content in
            MessageSubmission(roomID: room, senderID: 2, message: try NewMessage(content: content, uid: "u\(index)"))
        }
        let outcomes = try await service.send(batch)
        #expect(hook.calls.withLock { $0.count } == 1)
        #expect(hook.calls.withLock { $0[0].map(\.content) } == ["yes", "no way", "swap this", "bad one"])
        #expect(try outcomes[0].get().message.content == "yes")
        #expect(try outcomes[2].get().message.content == "swapped")
        for index in [1, 3] {
            guard case .failure(let error as ParleyError) = outcomes[index] else {
                Issue.record("send \(index) was stored")
                continue
            }
            #expect(error.code == .rejectedByPolicy)
        }
        #expect(await rooms.messageCount(room) == 2)
    }

    @Test(arguments: [MessageHookGate.Failure.allow, .reject])
    func aFailingHookAllowsOrRejectsAsConfigured(_ failure: MessageHookGate.Failure) async throws {
        let service = service(Hook(failing: true), failure: failure)
        let room = try await room(service)
        let outcomes = try await service.send([
            MessageSubmission(roomID: room, senderID: 2, message: try NewMessage(content: "hi", uid: "a"))
        ])
        switch (failure, outcomes[0]) {
        case (.allow, .success): break
        case (.reject, .failure(let error as ParleyError)): #expect(error.code == .rejectedByPolicy)
        default: Issue.record("\(failure): \(outcomes[0])")
        }
    }
}
