import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ParleyAPI

/// `/app`: the web client's page and files, each under the strict policy, with ETags.
struct WebClientTests {
    @Test func thePageAndItsFilesComeWithAStrictPolicy() async throws {
        let harness = try await APIHarness.make()
        let application = Application(router: harness.publicRouter(), logger: .quiet)
        try await application.test(.router) { client in
            for path in ["/app", "/app/"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                    let page = String(buffer: response.body)
                    #expect(page.contains(#"<script type="module" src="/app/js/main.js">"#))
                    #expect(!page.contains("<script>"), "no inline script")
                    let policy = try #require(response.headers[HTTPField.Name("Content-Security-Policy")!])
                    #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"))
                    // The broker's WebSocket listener the login names (APIHarness.endpoint).
                    #expect(policy.contains("connect-src 'self' wss://mqtt.example.test:8083"), "\(policy)")
                    #expect(!policy.contains("unsafe"))
                    #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                }
            }
            for (path, type) in [
                ("/app/app.css", "text/css"), ("/app/js/main.js", "text/javascript"),
                ("/app/js/conversation.js", "text/javascript"), ("/app/vendor/mqtt.js", "text/javascript"),
                ("/app/vendor/LICENSES.txt", "text/plain"),
            ] {
                let etag = try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                    #expect(response.body.readableBytes > 0)
                    return try #require(response.headers[.eTag])
                }
                try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: etag]) { response in
                    #expect(response.status == .notModified, "\(path)")
                }
            }
            for path in ["/app/nothing.js", "/app/js/nothing.js", "/app/js/../app.css", "/app/%2e%2e/openapi.yaml"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .notFound, "\(path)")
                    #expect(response.headers[.contentType] == "application/problem+json", "\(path)")
                }
            }
        }
    }

    @Test func signedFileURLsOfAnotherOriginAreAllowedAsMedia() {
        let endpoint = MQTTEndpoint(host: "broker.example", port: 8883, tls: false, websocketPort: 8080)
        let policy = WebClientController.policy(endpoint: endpoint, fileBaseURL: "https://files.example:8443/base")
        #expect(policy.contains("img-src 'self' blob: https://files.example:8443 data:"), "\(policy)")
        #expect(policy.contains("media-src 'self' blob: https://files.example:8443"), "\(policy)")
        #expect(policy.contains("connect-src 'self' ws://broker.example:8080"), "\(policy)")
        let none = WebClientController.policy(
            endpoint: MQTTEndpoint(host: "b", port: 1, tls: true, websocketPort: nil), fileBaseURL: "")
        #expect(none.contains("connect-src 'self';"), "\(none)")
    }
}
