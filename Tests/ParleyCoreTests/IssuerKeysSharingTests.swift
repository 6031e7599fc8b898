import Crypto
import Foundation
import Synchronization
import Testing

@testable import ParleyCore

/// Reads of an issuer's keys are shared while they run, and a failed read neither hammers the
/// issuer nor drops keys that were good a moment ago.
struct IssuerKeysSharingTests {
    /// A fetcher whose reads wait until released, and may fail.
    final class Gate: IssuerKeyFetcher {
        let state = Mutex((document: "", failing: false, reads: 0, waiters: [CheckedContinuation<Void, Never>]()))
        let gated: Bool

        init(_ document: String, gated: Bool = false) {
            self.gated = gated
            state.withLock { $0.document = document }
        }

        var reads: Int { state.withLock { $0.reads } }
        func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }
        var waiting: Int { state.withLock { $0.waiters.count } }
        func release() {
            for waiter in state.withLock({ state in
                defer { state.waiters = [] }
                return state.waiters
            }) {
                waiter.resume()
            }
        }

        func fetch(_ source: TrustedIssuer.KeySource) async throws -> (document: [UInt8], maxAge: Duration?) {
            state.withLock { $0.reads += 1 }
            if gated {
                await withCheckedContinuation { continuation in state.withLock { $0.waiters.append(continuation) } }
            }
            let (document, failing) = state.withLock { ($0.document, $0.failing) }
            if failing { throw Refused() }
            return (Array(document.utf8), nil)
        }

        struct Refused: Error {}
    }

    @Test func concurrentAsksShareOneRead() async throws {
        let gate = Gate(IssuerKeysTests.document([("a", P256.Signing.PrivateKey())]), gated: true)
        let keys = IssuerKeys(fetcher: gate)
        try await withThrowingTaskGroup(of: [String?].self) { group in
            for _ in 0..<8 { group.addTask { try await keys.keys(for: IssuerKeysTests.issuer).keyIDs } }
            while gate.waiting == 0 { try await Task.sleep(for: .milliseconds(5)) }
            // Let the others reach the read under way.
            try await Task.sleep(for: .milliseconds(50))
            gate.release()
            for try await ids in group { #expect(ids == ["a"]) }
        }
        #expect(gate.reads == 1)
    }

    @Test func aFailedReadKeepsTheHeldKeysAndIsNotRepeatedAtOnce() async throws {
        let gate = Gate(IssuerKeysTests.document([("a", P256.Signing.PrivateKey())]))
        let clock = IssuerKeysTests.TestClock()
        let keys = IssuerKeys(fetcher: gate, now: { clock.now })
        _ = try await keys.keys(for: IssuerKeysTests.issuer)
        gate.fail(true)
        clock.advance(.seconds(61))
        // Expired, the read fails: the keys of a moment ago still answer.
        #expect(try await keys.keys(for: IssuerKeysTests.issuer).keyIDs == ["a"])
        #expect(try await keys.keys(for: IssuerKeysTests.issuer).keyIDs == ["a"])
        #expect(gate.reads == 2)
        clock.advance(.seconds(6))
        gate.fail(false)
        _ = try await keys.keys(for: IssuerKeysTests.issuer)
        #expect(gate.reads == 3)
    }

    @Test func withNoKeysHeldAFailedReadIsUnavailability() async throws {
        let gate = Gate("{}")
        gate.fail(true)
        let clock = IssuerKeysTests.TestClock()
        let keys = IssuerKeys(fetcher: gate, now: { clock.now })
        for _ in 0..<3 {
            let error = await #expect(throws: IssuerKeysUnavailable.self) {
                try await keys.keys(for: IssuerKeysTests.issuer)
            }
            #expect(error?.isUnavailability == true && error?.issuer == IssuerKeysTests.issuer.issuer)
        }
        // Asked again only after a pause.
        #expect(gate.reads == 1)
        gate.fail(false)
        clock.advance(.seconds(6))
        // Not a key document: the issuer's fault, unavailable as well.
        await #expect(throws: IssuerKeysUnavailable.self) { try await keys.keys(for: IssuerKeysTests.issuer) }
        #expect(gate.reads == 2)
    }
}
