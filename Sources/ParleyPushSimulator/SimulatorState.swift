import Foundation
import ParleyCore
import Synchronization

/// One request the simulator received.
public struct ReceivedPush: Sendable {
    public let provider: PushProvider
    public let token: String
    /// Lower-cased header names.
    public let headers: [String: String]
    public let body: Data
    public let receivedAt: ContinuousClock.Instant
    /// What a real provider would have refused; empty when the request was right.
    public let problems: [String]
    public let answer: PushSimulator.Answer

    /// The body parsed as a JSON object.
    public var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
}

/// What the routes record and the tests read.
final class SimulatorState: Sendable {
    struct State {
        var received: [ReceivedPush] = []
        var attempts: [String: Int] = [:]
        var script: PushSimulator.Script = { _, _, _ in .success }
        var issuedAccessTokens: Set<String> = []
        var seenProviderTokens: Set<String> = []
        var expiredProviderTokens: Set<String> = []
        var tokenRequests = 0
    }

    let locked = Mutex(State())

    /// Records a push and returns the scripted answer (problems turn it into a refusal elsewhere).
    func record(
        _ provider: PushProvider, token: String, headers: [String: String], body: Data, problems: [String]
    ) -> PushSimulator.Answer {
        locked.withLock { state in
            let key = "\(provider.rawValue):\(token)"
            let attempt = state.attempts[key, default: 0]
            state.attempts[key] = attempt + 1
            let answer = state.script(provider, token, attempt)
            state.received.append(
                ReceivedPush(
                    provider: provider, token: token, headers: headers, body: body, receivedAt: .now,
                    problems: problems, answer: answer))
            return answer
        }
    }
}
