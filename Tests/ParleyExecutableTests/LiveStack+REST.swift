import Foundation
import ParleyCore
import ParleyTestSupport

@testable import ParleyAPI

/// The stack's REST client: curl against ``LiveStack/base``.
extension LiveStack {
    struct Response {
        let status: Int
        /// The body as sent.
        let text: String

        /// The body as the API's own type; one that is not throws.
        func decoded<Answer: Decodable>(_ type: Answer.Type) throws -> Answer {
            try JSONCoding.decoder.decode(Answer.self, from: Data(text.utf8))
        }
    }

    /// One request through curl, with a JSON `body`; status 0 when no answer came within `timeout`.
    func request(
        _ method: String, _ path: String, body: String? = nil, token: String? = nil, on base: String? = nil,
        headers: [String] = [], timeout: Int = 10
    ) async throws -> Response {
        var arguments = ["-s", "--max-time", String(timeout), "-X", method, "-w", "\n%{http_code}"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let result = try await Subprocess.run("/usr/bin/curl", arguments + [(base ?? self.base) + path])
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        return Response(status: status, text: lines.dropLast().joined(separator: "\n"))
    }

    /// Registers a user and logs in; returns the user's id, access token and MQTT login.
    func signUp(_ name: String) async throws -> (id: Int, token: String, mqtt: LoginResponse.MQTT) {
        let email = "\(name)-\(UUID().uuidString.prefix(8))@example.com"
        let registered = try await request(
            "POST", "/v1/auth/register",
            body: #"{"email":"\#(email)","password":"correct horse battery","firstName":"\#(name)","lastName":"Test"}"#)
        let login = try await request(
            "POST", "/v1/auth/login", body: #"{"email":"\#(email)","password":"correct horse battery"}"#)
        guard let user = try? registered.decoded(UserResponse.self), let answer = try? login.decoded(LoginResponse.self)
        else {
            throw TestEnvironmentError("sign-up failed: \(registered.text) \(login.text)")
        }
        return (Int(user.id), answer.accessToken, answer.mqtt)
    }
}
