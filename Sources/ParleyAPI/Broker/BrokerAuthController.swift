import Foundation
import Hummingbird
import ParleyCore

/// Broker authorisation on the internal listener: mosquitto-go-auth's HTTP backend (JSON
/// response mode) and EMQX 5's HTTP authenticator and authorizer, so those brokers work
/// without Parley's plugin. All answer from ``BrokerAuthority``.
public struct BrokerAuthController: Sendable {
    let authority: BrokerAuthority

    public init(authority: BrokerAuthority) { self.authority = authority }

    struct GoAuthUser: Decodable {
        let username: String
        let password: String
        let clientid: String
    }
    struct GoAuthSuperuser: Decodable {
        let username: String
    }
    struct GoAuthACL: Decodable {
        let username: String
        let clientid: String
        let topic: String
        let acc: Int
    }
    struct GoAuthAnswer: Codable, Sendable {
        let ok: Bool
        let error: String?
        /// What an allowed ACL question also allows, as `"<acc> <topic>"` (``BrokerACL/Grant``):
        /// Parley's plugin caches these with the answer; mosquitto-go-auth ignores the field.
        var implies: [String]? = nil
    }
    struct EMQXAuthn: Decodable {
        let clientid: String
        let username: String
        let password: String
    }
    struct EMQXAuthz: Decodable {
        let clientid: String
        let username: String
        let topic: String
        let action: String
    }
    struct EMQXAnswer: Codable, Sendable {
        let result: String
        let is_superuser: Bool?
        /// A user's connection ends when its MQTT password expires (EMQX 5.3 and later; Unix
        /// seconds), as the plugin refuses an expired token at its next check.
        var expire_at: Int64? = nil
    }

    public func addRoutes(to router: Router<ParleyRequestContext>) {
        let broker = router.group("internal/broker")
        broker.post("user") { request, context in
            let body = try await JSONBody.decode(GoAuthUser.self, from: request, context: context)
            let identity = try await authority.authenticate(
                username: body.username, password: body.password, clientID: body.clientid)
            return Self.goAuth(identity != nil, error: "not authorized")
        }
        broker.post("superuser") { request, context in
            let body = try await JSONBody.decode(GoAuthSuperuser.self, from: request, context: context)
            return Self.goAuth(authority.isSuperuser(username: body.username), error: "not a superuser")
        }
        broker.post("acl") { request, context in
            let body = try await JSONBody.decode(GoAuthACL.self, from: request, context: context)
            guard let access = BrokerACL.Access(rawValue: body.acc) else {
                throw ParleyError.invalidRequest("acc must be 1, 2 or 4", field: "acc")
            }
            let allowed = try await authority.authorize(username: body.username, topic: body.topic, access: access)
            guard allowed else { return Self.goAuth(false, error: "not authorized for this topic") }
            let implied = authority.implied(username: body.username, topic: body.topic, access: access)
            return JSONResponse(
                .ok,
                GoAuthAnswer(
                    ok: true, error: nil,
                    implies: implied.isEmpty ? nil : implied.map { "\($0.access.rawValue) \($0.topic)" }))
        }
        broker.post("emqx/authn") { request, context in
            let body = try await JSONBody.decode(EMQXAuthn.self, from: request, context: context)
            let identity = try await authority.authenticate(
                username: body.username, password: body.password, clientID: body.clientid)
            let expiry = identity.flatMap { $0 == .server ? nil : authority.expiry(ofPassword: body.password) }
            return JSONResponse(
                .ok,
                EMQXAnswer(
                    result: identity == nil ? "deny" : "allow", is_superuser: identity.map { $0 == .server },
                    expire_at: expiry))
        }
        broker.post("emqx/authz") { request, context in
            let body = try await JSONBody.decode(EMQXAuthz.self, from: request, context: context)
            let accesses: [BrokerACL.Access] =
                switch body.action {
                case "publish": [.write]
                case "subscribe": [.subscribe]
                case "all": [.write, .subscribe]
                default: throw ParleyError.invalidRequest("action must be publish or subscribe", field: "action")
                }
            var allowed = true
            for access in accesses where allowed {
                allowed = try await authority.authorize(username: body.username, topic: body.topic, access: access)
            }
            return JSONResponse(.ok, EMQXAnswer(result: allowed ? "allow" : "deny", is_superuser: nil))
        }
    }

    static func goAuth(_ ok: Bool, error: String) -> JSONResponse<GoAuthAnswer> {
        JSONResponse(ok ? .ok : .forbidden, GoAuthAnswer(ok: ok, error: ok ? nil : error))
    }
}
