import ParleyRuntime
import ParleyTestSupport
import Testing

struct TimeoutTests {
    @Test func returnsTheResultInTime() async throws {
        let value = try await withTimeout(.seconds(1)) { 42 }
        #expect(value == 42)
    }

    @Test func throwsTheOperationsError() async {
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await withTimeout(.seconds(1)) { throw Failure() }
        }
    }

    @Test func throwsTimeoutErrorAtTheDeadlineEvenIfTheOperationIgnoresCancellation() async {
        let start = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(100)) {
                await uncancellableSleep(seconds: 10)
            }
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func cancelsAnOperationThatHonoursCancellation() async throws {
        let cancelled = try? await withTimeout(.milliseconds(50)) { () -> Bool in
            do {
                try await Task.sleep(for: .seconds(5))
                return false
            } catch {
                return true
            }
        }
        #expect(cancelled == nil)
    }
}
