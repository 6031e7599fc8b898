import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore
import _CryptoExtras

/// The simulator's routes: what each provider checks, and how it answers.
struct Routes: Sendable {
    let configuration: PushSimulator.Configuration
    let state: SimulatorState

    func add(to router: Router<BasicRequestContext>) {
        router.post("/3/device/:token") { request, context in
            try await apns(request, token: try context.parameters.require("token"))
        }
        router.post("/token") { request, _ in try await oauthToken(request) }
        router.post("/v1/projects/:project/messages:send") { request, context in
            try await fcm(request, project: try context.parameters.require("project"))
        }
        router.post("/webhook") { request, _ in try await webhook(request) }
    }

    // MARK: APNs

    private func apns(_ request: Request, token: String) async throws -> Response {
        let body = try await bytes(request)
        let headers = Self.headers(request)
        var problems: [String] = []
        let authorization = headers["authorization"] ?? ""
        if !validProviderToken(authorization) {
            problems.append("InvalidProviderToken")
        } else if state.locked.withLock({ $0.expiredProviderTokens.contains(authorization) }) {
            problems.append("ExpiredProviderToken")
        }
        state.locked.withLock { _ = $0.seenProviderTokens.insert(authorization) }
        if headers["apns-topic"] != configuration.apnsTopic { problems.append("TopicDisallowed") }
        if !["alert", "background"].contains(headers["apns-push-type"] ?? "") { problems.append("InvalidPushType") }
        if !["5", "10"].contains(headers["apns-priority"] ?? "10") { problems.append("BadPriority") }
        // Apple refuses a background push at the immediate priority (10, the default).
        if headers["apns-push-type"] == "background", headers["apns-priority"] != "5" { problems.append("BadPriority") }
        if let expiration = headers["apns-expiration"], Int(expiration) == nil { problems.append("BadExpirationDate") }
        if (headers["apns-collapse-id"]?.utf8.count ?? 0) > 64 { problems.append("BadCollapseId") }
        if body.count > 4096 { problems.append("PayloadTooLarge") }
        let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        if json?["aps"] as? [String: Any] == nil { problems.append("PayloadEmpty") }
        if token.isEmpty || token.count > 200 { problems.append("BadDeviceToken") }
        let answer = state.record(.apns, token: token, headers: headers, body: body, problems: problems)
        try await Task.sleep(for: configuration.latency)
        if let problem = problems.first {
            let status = ["InvalidProviderToken", "ExpiredProviderToken"].contains(problem) ? 403 : 400
            return Self.json(status, ["reason": problem])
        }
        switch answer {
        case .success: return Self.json(200, nil, extra: [("apns-id", UUID().uuidString)])
        case .unregistered:
            return Self.json(410, ["reason": "Unregistered", "timestamp": Int(Date().timeIntervalSince1970 * 1000)])
        case .badRequest: return Self.json(400, ["reason": "BadDeviceToken"])
        case .tooManyRequests(let retryAfter):
            return Self.json(
                429, ["reason": "TooManyRequests"], extra: retryAfter.map { [("retry-after", "\($0)")] } ?? [])
        case .serverError: return Self.json(500, ["reason": "InternalServerError"])
        }
    }

    /// An ES256 provider token from the configured key, key id and team, less than an hour old.
    private func validProviderToken(_ authorization: String?) -> Bool {
        guard let authorization, authorization.lowercased().hasPrefix("bearer "),
            let token = SignedToken(String(authorization.dropFirst(7))),
            token.header["alg"] as? String == "ES256", token.header["kid"] as? String == configuration.apnsKeyID,
            token.claims["iss"] as? String == configuration.apnsTeamID, let issued = token.claims["iat"] as? Int,
            abs(Int(Date().timeIntervalSince1970) - issued) < 3600,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature)
        else { return false }
        return configuration.apnsKey.isValidSignature(signature, for: Data(token.signingInput.utf8))
    }

    // MARK: FCM

    private func oauthToken(_ request: Request) async throws -> Response {
        let form = Self.form(String(decoding: try await bytes(request), as: UTF8.self))
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer",
            let assertion = form["assertion"], let token = SignedToken(assertion),
            token.header["alg"] as? String == "RS256", token.claims["iss"] as? String == configuration.fcmClientEmail,
            (token.claims["scope"] as? String)?.contains("https://www.googleapis.com/auth/firebase.messaging") == true,
            (token.claims["aud"] as? String)?.hasSuffix("/token") == true,
            let issued = token.claims["iat"] as? Int, let expires = token.claims["exp"] as? Int,
            expires > issued, expires - issued <= 3600,
            configuration.fcmKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: token.signature), for: Data(token.signingInput.utf8),
                padding: .insecurePKCS1v1_5)
        else {
            return Self.json(400, ["error": "invalid_grant", "error_description": "Invalid JWT Signature."])
        }
        let accessToken = "ya29.simulated-" + UUID().uuidString
        state.locked.withLock {
            $0.issuedAccessTokens.insert(accessToken)
            $0.tokenRequests += 1
        }
        return Self.json(200, ["access_token": accessToken, "expires_in": 3599, "token_type": "Bearer"])
    }

    private func fcm(_ request: Request, project: String) async throws -> Response {
        let body = try await bytes(request)
        let headers = Self.headers(request)
        let bearer = headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let bearer, state.locked.withLock({ $0.issuedAccessTokens.contains(bearer) }) else {
            return Self.fcmError(401, "UNAUTHENTICATED", nil)
        }
        guard project == configuration.fcmProjectID else { return Self.fcmError(403, "PERMISSION_DENIED", nil) }
        let message = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["message"] as? [String: Any]
        var problems: [String] = []
        let token = message?["token"] as? String ?? ""
        if token.isEmpty { problems.append("message.token missing") }
        if let data = message?["data"] as? [String: Any], data.values.contains(where: { !($0 is String) }) {
            problems.append("data values must be strings")
        }
        let answer = state.record(.fcm, token: token, headers: headers, body: body, problems: problems)
        try await Task.sleep(for: configuration.latency)
        if !problems.isEmpty { return Self.fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT") }
        switch answer {
        case .success: return Self.json(200, ["name": "projects/\(project)/messages/\(UUID().uuidString)"])
        case .unregistered: return Self.fcmError(404, "NOT_FOUND", "UNREGISTERED")
        case .badRequest: return Self.fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")
        case .tooManyRequests(let retryAfter):
            return Self.fcmError(
                429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", extra: retryAfter.map { [("retry-after", "\($0)")] } ?? [])
        case .serverError: return Self.fcmError(500, "INTERNAL", "INTERNAL")
        }
    }

    // MARK: Webhook

    private func webhook(_ request: Request) async throws -> Response {
        let body = try await bytes(request)
        let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let token = json?["token"] as? String ?? ""
        let answer = state.record(
            .webhook, token: token, headers: Self.headers(request), body: body,
            problems: token.isEmpty ? ["token missing"] : [])
        try await Task.sleep(for: configuration.latency)
        switch answer {
        case .success: return Self.json(204, nil)
        case .unregistered: return Self.json(410, nil)
        case .badRequest: return Self.json(400, nil)
        case .tooManyRequests(let retryAfter):
            return Self.json(429, nil, extra: retryAfter.map { [("retry-after", "\($0)")] } ?? [])
        case .serverError: return Self.json(500, nil)
        }
    }

    // MARK: Helpers

    private func bytes(_ request: Request) async throws -> Data {
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        return Data(buffer.readableBytesView)
    }

    static func headers(_ request: Request) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        return headers
    }

    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    static func json(_ status: Int, _ object: [String: Any]?, extra: [(String, String)] = []) -> Response {
        var headers = HTTPFields()
        for (name, value) in extra {
            if let name = HTTPField.Name(name) { headers[name] = value }
        }
        guard let object, let data = try? JSONSerialization.data(withJSONObject: object) else {
            return Response(status: .init(code: status), headers: headers)
        }
        headers[.contentType] = "application/json"
        return Response(
            status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: Array(data))))
    }

    static func fcmError(_ status: Int, _ code: String, _ fcmCode: String?, extra: [(String, String)] = []) -> Response
    {
        var error: [String: Any] = ["code": status, "message": code, "status": code]
        if let fcmCode {
            error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcmCode]]
        }
        return json(status, ["error": error], extra: extra)
    }
}

/// A compact JWS split into its parts (no checks yet).
struct SignedToken {
    let header: [String: Any]
    let claims: [String: Any]
    let signature: Data
    let signingInput: String

    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let claims = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let headerJSON = (try? JSONSerialization.jsonObject(with: Data(header))) as? [String: Any],
            let claimsJSON = (try? JSONSerialization.jsonObject(with: Data(claims))) as? [String: Any]
        else { return nil }
        self.header = headerJSON
        self.claims = claimsJSON
        self.signature = Data(signature)
        signingInput = parts[0] + "." + parts[1]
    }
}
