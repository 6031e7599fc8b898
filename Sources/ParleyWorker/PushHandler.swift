import Foundation
import Logging
import Metrics
import ParleyCore

/// The `push` role: sends one push job through its provider and acts on the answer.
///
/// A dead token is deleted; throttling and provider failures are retried after the
/// provider's `Retry-After` (or the queue's back-off); any other refusal goes to the
/// dead-letter stream with its reason. A provider that is not configured drops its jobs.
public struct PushHandler: Sendable {
    let senders: [PushProvider: any PushSender]
    let tokens: any PushTokenStore
    let logger: Logger

    public init(senders: [PushProvider: any PushSender], tokens: any PushTokenStore, logger: Logger) {
        self.senders = senders
        self.tokens = tokens
        self.logger = logger
    }

    public func handle(_ payload: String) async throws {
        let job: PushJob
        do {
            job = try JSONCoding.decoder.decode(PushJob.self, from: Data(payload.utf8))
        } catch {
            throw PermanentJobFailure(reason: "malformed push job")
        }
        let span = PipelineTrace.continueTrace("push", from: job.traceparent, kind: .client)
        span?.set("parley.push.provider", job.provider.rawValue)
        do {
            let outcome = try await send(job)
            span?.set("parley.push.outcome", outcome)
            span?.end()
        } catch {
            span?.end(failing: error)
            throw error
        }
    }

    /// Sends the job; returns the outcome as counted.
    private func send(_ job: PushJob) async throws -> String {
        guard let sender = senders[job.provider] else {
            count(job.provider, "unconfigured")
            logger.debug("push provider not configured", metadata: ["provider": "\(job.provider.rawValue)"])
            return "unconfigured"
        }
        let outcome: PushOutcome
        do {
            outcome = try await sender.send(job)
        } catch {
            count(job.provider, "unreachable")
            throw RetryLater(after: nil, reason: "\(job.provider.rawValue) unreachable: \(error)")
        }
        switch outcome {
        case .delivered:
            count(job.provider, "delivered")
            return "delivered"
        case .deadToken(let reason):
            count(job.provider, "dead-token")
            logger.info(
                "push token removed",
                metadata: ["provider": "\(job.provider.rawValue)", "device": "\(job.deviceID)", "reason": "\(reason)"])
            try await tokens.removeToken(deviceID: job.deviceID, token: job.token)
            return "dead-token"
        case .retry(let after, let reason):
            count(job.provider, "retry")
            throw RetryLater(after: after, reason: "\(job.provider.rawValue): \(reason)")
        case .rejected(let reason):
            count(job.provider, "rejected")
            throw PermanentJobFailure(reason: "\(job.provider.rawValue) rejected the push: \(reason)")
        }
    }

    private func count(_ provider: PushProvider, _ outcome: String) {
        Counter(label: "parley_push_total", dimensions: [("provider", provider.rawValue), ("outcome", outcome)])
            .increment()
    }
}
