import Foundation
import ParleyTestSupport
import Testing

/// The plugin's C token verifier against the vectors ParleyCore is tested with.
struct PluginTokenVectorTests {
    static let tests = MQTTTokenVectors.testsDirectory

    /// Compiles the verifier with the plugin's own token.c.
    func verifier() async throws -> String {
        let sources = Self.tests.deletingLastPathComponent().appendingPathComponent("Sources/CParleyMosquittoPlugin")
        let output = TestScratch.path("parley-verify-token")
        let compiler = ["/usr/bin/cc", "/opt/swift/usr/bin/clang"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let result = try await Subprocess.run(
            try #require(compiler),
            [
                "-O1", "-I", sources.appendingPathComponent("include").path,
                sources.appendingPathComponent("token.c").path,
                Self.tests.appendingPathComponent("PluginTokenCheck/verify_token.c").path, "-lcrypto", "-o", output,
            ])
        guard result.status == 0 else {
            throw TestEnvironmentError("cannot build the verifier: \(result.standardError)")
        }
        return output
    }

    @Test func theCVerifierAgreesWithEveryVector() async throws {
        let vectors = try MQTTTokenVectors.load()
        let verify = try await verifier()
        defer { try? FileManager.default.removeItem(atPath: verify) }
        func run(_ token: String) async throws -> [String] {
            let result = try await Subprocess.run(verify, [vectors.keyBase64, String(vectors.verifiedAt), token])
            return result.standardOutput.split(separator: " ").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        for vector in vectors.valid {
            #expect(
                try await run(vector.token)
                    == ["0", vector.userId, vector.clientId, vector.sessionId, String(vector.expiresAt)])
        }
        let codes = ["malformed": "1", "badSignature": "2", "expired": "3"]
        for vector in vectors.invalid {
            #expect(try await run(vector.token).first == codes[vector.reason], "\(vector.reason): \(vector.token)")
        }
        // One character changed anywhere is refused, as in ParleyCore.
        let token = vectors.valid[0].token
        for index in token.indices {
            var changed = token
            changed.replaceSubrange(index...index, with: token[index] == "A" ? "B" : "A")
            #expect(
                try await run(changed).first != "0",
                "accepted with position \(token.distance(from: token.startIndex, to: index)) changed")
        }
    }
}
