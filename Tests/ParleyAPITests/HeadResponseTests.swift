import Foundation
import Hummingbird
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// A HEAD answered with an error has no body on either protocol, and over HTTP/2 it leaves
/// every other stream of its connection alone.
struct HeadResponseTests {
    /// 10 KB over about 1.5 s: in flight while the HEAD is answered.
    static func slowRoute(_ router: Router<ParleyRequestContext>) {
        router.get("/test/slow") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"],
                body: ResponseBody(contentLength: 10_000) { writer in
                    for _ in 0..<10 {
                        try await writer.write(ByteBuffer(string: String(repeating: "x", count: 1_000)))
                        try await Task.sleep(for: .milliseconds(150))
                    }
                    try await writer.finish(nil)
                })
        }
        router.head("/test/secret") { _, _ -> Response in throw ParleyError.unauthorized }
    }

    /// One curl, one connection: the slow GET and then each HEAD multiplexed beside it. Each
    /// line: status, bytes received, new connections made.
    func transfers(_ base: String, heads: [String], http2: Bool) async throws -> [[Int]] {
        let format = "%{http_code} %{size_download} %{num_connects}\n"
        let version = http2 ? "--http2" : "--http1.1"
        var arguments = ["-sS", "--max-time", "20", "--parallel", "-k", version, "-w", format, "-o", "/dev/null"]
        arguments.append(base + "/test/slow")
        for path in heads {
            arguments += ["--next", "-k", version, "-I", "-w", format, "-o", "/dev/null", base + path]
        }
        let result = try await Subprocess.run("/usr/bin/curl", arguments)
        #expect(result.status == 0, "curl: \(result.standardError)")
        return result.standardOutput.split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
    }

    @Test func aFailingHeadBesideALongGetOnOneHTTP2ConnectionLetsBothComplete() async throws {
        let server = try await LiveServer(extend: Self.slowRoute)
        for (base, http2) in [
            ("https://127.0.0.1:\(server.port(.tls))", true), ("https://127.0.0.1:\(server.port(.tls))", false),
        ] {
            let lines = try await transfers(base, heads: ["/no/such/path", "/test/secret"], http2: http2)
            let statuses = lines.map { $0.first ?? 0 }.sorted()
            #expect(statuses == [200, 401, 404], "http2 \(http2): \(lines)")
            // The GET's whole body arrived; the HEADs carried none.
            let slow = lines.first { $0.first == 200 }
            #expect(slow?.dropFirst().first == 10_000, "http2 \(http2): \(lines)")
            #expect(lines.filter { $0.first != 200 }.allSatisfy { $0.dropFirst().first == 0 }, "\(lines)")
            if http2 {
                // Multiplexed: one connection for all three.
                #expect(lines.map { $0.last ?? 0 }.reduce(0, +) == 1, "connections: \(lines)")
            }
        }
        try await server.stop()
    }
}
