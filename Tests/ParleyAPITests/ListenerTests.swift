import Foundation
import Hummingbird
import ParleyTestSupport
import Prometheus
import Synchronization
import Testing

@testable import ParleyAPI

struct ListenerTests {
    @Test func tlsNegotiatesHTTP2AndFallsBackToHTTP1() async throws {
        let server = try await LiveServer()
        let url = "https://127.0.0.1:\(server.port(.tls))/health/live"
        let h2 = try await curl(["--http2", "-k", url])
        #expect(h2.httpVersion == "2")
        #expect(h2.status == 200)
        let h1 = try await curl(["--http1.1", "-k", url])
        #expect(h1.httpVersion == "1.1")
        #expect(h1.status == 200)
        try await server.stop()
    }

    @Test func cleartextServesH2CWithPriorKnowledgeAndHTTP1OnOnePort() async throws {
        let server = try await LiveServer()
        let url = "http://127.0.0.1:\(server.port(.cleartext))/health/live"
        let h2c = try await curl(["--http2-prior-knowledge", url])
        #expect(h2c.httpVersion == "2")
        #expect(h2c.body == #"{"status":"live"}"#)
        let h1 = try await curl(["--http1.1", url])
        #expect(h1.httpVersion == "1.1")
        #expect(h1.status == 200)
        try await server.stop()
    }

    @Test func metricsAreOnTheInternalListenerOnly() async throws {
        let registry = PrometheusCollectorRegistry()
        registry.makeCounter(name: "parley_test_events_total").increment(by: Int64(3))
        let server = try await LiveServer(registry: registry)
        let metrics = try await curl(["http://127.0.0.1:\(server.port(.internal))/metrics"])
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("parley_test_events_total 3"))
        let hidden = try await curl(["http://127.0.0.1:\(server.port(.cleartext))/metrics"])
        #expect(hidden.status == 404)
        try await server.stop()
    }

    /// SIGTERM triggers exactly this graceful shutdown in `parley serve`.
    @Test func gracefulShutdownLetsAnInFlightRequestFinish() async throws {
        let arrived = Arrival()
        let server = try await LiveServer { router in
            router.get("/test/slow") { _, _ -> String in
                arrived.set()
                try? await Task.sleep(for: .milliseconds(1500))
                return "finished"
            }
        }
        let port = server.port(.cleartext)
        async let slow = curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/test/slow"])
        // The shutdown must find the request in flight. A fixed 400 ms was once too short: with
        // stress-ng on both cores, curl had not sent it yet, so the shutdown closed an idle
        // connection and curl saw it reset.
        for _ in 0..<1000 where !arrived.isSet { try await Task.sleep(for: .milliseconds(20)) }
        #expect(arrived.isSet, "the request did not reach the server within 20 s")
        let start = ContinuousClock.now
        try await server.stop()
        let response = try await slow
        #expect(response.status == 200)
        #expect(response.body == "finished")
        #expect(ContinuousClock.now - start > .milliseconds(500))
    }
}

/// Whether a request reached its handler (set there, read by the test).
private final class Arrival: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }

    /// What NIO's parser refuses is answered as every other error: problem+json, then closed.
    @Test func malformedHTTPIsAnsweredWithProblemJSON() async throws {
        let server = try await LiveServer()
        let port = server.port(.cleartext)
        let long = String(repeating: "a", count: 100_000)
        let requests = [
            "POST /health/live HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 3\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n",
            "GET /health/\\000live HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
            "GET /health/live HTTP/1.1\\r\\nHost: x\\r\\nX-Long: \(long)\\r\\n\\r\\n",
            "GET /health/live?\(long) HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
        ]
        for request in requests {
            // bash's printf writes the NUL; the server closes the connection after its answer.
            let script = "exec 3<>/dev/tcp/127.0.0.1/\(port); printf '\(request)' >&3; timeout 10 cat <&3"
            let answer = try await Subprocess.run("/bin/bash", ["-c", script], timeLimit: .seconds(20))
            let text = answer.standardOutput
            #expect(text.hasPrefix("HTTP/1.1 400"), "\(request.prefix(60)): \(text.prefix(200))")
            #expect(text.lowercased().contains("content-type: application/problem+json"))
            #expect(text.contains(#""code":"invalid-request""#))
        }
        try await server.stop()
    }

    /// A slowloris client (a head trickled a header at a time, which keeps resetting the idle
    /// timeout) is closed once the head's time is up; a request that came in time is answered.
    @Test func aRequestHeadThatNeverEndsIsClosedInTime() async throws {
        let server = try await LiveServer(requestHeadTimeout: .seconds(1))
        let port = server.port(.cleartext)
        // Milliseconds until the server closes a connection that sends a header every 250 ms.
        let script = """
            exec 3<>/dev/tcp/127.0.0.1/\(port); trap '' PIPE
            ( printf 'GET /health/live HTTP/1.1\\r\\nHost: x\\r\\n'
              for i in $(seq 1 40); do printf 'X-Slow: a\\r\\n'; sleep 0.25; done ) >&3 2>/dev/null &
            start=$(date +%s%N); timeout 10 cat <&3 > /dev/null; end=$(date +%s%N)
            kill %1 2>/dev/null; echo $(( (end - start) / 1000000 ))
            """
        let answer = try await Subprocess.run("/bin/bash", ["-c", script], timeLimit: .seconds(20))
        let closedAfter = Int(answer.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(closedAfter >= 500 && closedAfter < 5_000, "closed after \(closedAfter) ms")
        let result = try await curl(["http://127.0.0.1:\(port)/health/live"])
        #expect(result.status == 200)
        try await server.stop()
    }
}
