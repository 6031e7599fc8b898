import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// The broker-auth endpoints with the exact bodies mosquitto-go-auth and EMQX 5 send.
struct BrokerAuthTests {
    static let server = BrokerAuthority.ServerIdentity(username: "parley-server", password: "server-secret")

    /// Runs `body` with the public API (to sign users in) and the internal listener's router.
    func withRouters(
        _ body:
            @escaping @Sendable (_ api: any TestClientProtocol, _ broker: any TestClientProtocol) async throws -> Void
    ) async throws {
        let harness = try await APIHarness.make()
        let authority = BrokerAuthority(
            key: APIHarness.mqttKey, server: Self.server,
            sessions: PostgresSessionRepository(database: harness.database, logger: .quiet),
            rooms: PostgresRoomRepository(database: harness.database, logger: .quiet, fileLinks: .testing),
            privacy: PostgresPrivacyRepository(database: harness.database, logger: .quiet))
        let internalApp = Application(
            router: ParleyRoutes.forTesting(broker: BrokerAuthController(authority: authority)).internalRouter(),
            logger: .quiet)
        try await harness.run { api in
            try await internalApp.test(.router) { broker in try await body(api, broker) }
        }
    }

    /// A broker's call: the status, and the answer as the API's own type (nil when it is not
    /// one, as for a refused malformed call) and as sent.
    func post<Reply: Decodable>(
        _ client: any TestClientProtocol, _ path: String, _ json: String,
        as _: Reply.Type = BrokerAuthController.GoAuthAnswer.self
    ) async throws -> (status: HTTPResponse.Status, reply: Reply?, text: String) {
        try await client.execute(
            uri: path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: json)
        ) { response in
            let text = String(buffer: response.body)
            return (response.status, try? decode(Reply.self, from: text), text)
        }
    }

    @Test func goAuthUserAndSuperuser() async throws {
        try await withRouters { api, broker in
            let login = try await api.signUp()
            let (user, password, client) = (login.mqtt.username, login.mqtt.password, login.mqtt.clientId)
            let good = try await post(
                broker, "/internal/broker/user",
                #"{"username":"\#(user)","password":"\#(password)","clientid":"\#(client)"}"#)
            #expect(good.status == .ok)
            #expect(good.reply?.ok == true)
            let foreignClient = try await post(
                broker, "/internal/broker/user",
                #"{"username":"\#(user)","password":"\#(password)","clientid":"other"}"#)
            #expect(foreignClient.status == .forbidden)
            #expect(foreignClient.reply?.ok == false)
            #expect(foreignClient.reply?.error != nil)
            // One character of the signature changed (not the last, whose low bits are padding).
            var changed = Array(password)
            let index = changed.count - 5
            changed[index] = changed[index] == "A" ? "B" : "A"
            let tampered = try await post(
                broker, "/internal/broker/user",
                #"{"username":"\#(user)","password":"\#(String(changed))","clientid":"\#(client)"}"#)
            #expect(tampered.status == .forbidden)
            let otherUser = try await post(
                broker, "/internal/broker/user",
                #"{"username":"999","password":"\#(password)","clientid":"\#(client)"}"#)
            #expect(otherUser.status == .forbidden)

            #expect(try await api.json(.post, "/v1/auth/logout", token: token(login)).status == .noContent)
            let afterLogout = try await post(
                broker, "/internal/broker/user",
                #"{"username":"\#(user)","password":"\#(password)","clientid":"\#(client)"}"#)
            #expect(afterLogout.status == .forbidden)

            let server = try await post(
                broker, "/internal/broker/user",
                #"{"username":"parley-server","password":"server-secret","clientid":"x"}"#)
            #expect(server.status == .ok)
            let wrongServer = try await post(
                broker, "/internal/broker/user", #"{"username":"parley-server","password":"guess","clientid":"x"}"#)
            #expect(wrongServer.status == .forbidden)
            #expect(
                try await post(broker, "/internal/broker/superuser", #"{"username":"parley-server"}"#).status == .ok)
            #expect(
                try await post(broker, "/internal/broker/superuser", #"{"username":"\#(user)"}"#).status == .forbidden)
        }
    }

    @Test func goAuthACLFollowsMembership() async throws {
        try await withRouters { api, broker in
            let users = try await api.signUp(count: 4)
            let uid = try await api.multipartyRoom(
                by: users[0], members: [(users[1], "writer"), (users[2], "reader")], firstMessage: ("hi", "1")
            ).uid
            func acl(_ user: LoginResponse, _ topic: String, _ acc: Int) async throws -> HTTPResponse.Status {
                try await post(
                    broker, "/internal/broker/acl",
                    #"{"username":"\#(userID(user))","clientid":"c","topic":"\#(topic)","acc":\#(acc)}"#
                ).status
            }
            #expect(try await acl(users[1], "chat-room/\(uid)", 4) == .ok)
            // What an allowed subscription also allows, for Parley's plugin to keep (BrokerACL.implied).
            func implies(_ user: LoginResponse, _ topic: String, _ acc: Int) async throws -> [String]? {
                try await post(
                    broker, "/internal/broker/acl",
                    #"{"username":"\#(userID(user))","clientid":"c","topic":"\#(topic)","acc":\#(acc)}"#
                ).reply?.implies
            }
            #expect(try await implies(users[2], "chat-room/\(uid)", 4) == ["2 chat-in/\(uid)"])
            #expect(try await implies(users[3], "chat-room/\(uid)", 4) == nil)
            #expect(try await implies(users[1], "chat-in/\(uid)", 2) == nil)
            #expect(try await acl(users[2], "chat-room/\(uid)", 1) == .ok)
            #expect(try await acl(users[3], "chat-room/\(uid)", 4) == .forbidden)
            #expect(try await acl(users[1], "chat-room/\(uid)", 2) == .forbidden)
            #expect(try await acl(users[1], "chat-in/\(uid)", 2) == .ok)
            #expect(try await acl(users[3], "chat-in/\(uid)", 2) == .forbidden)
            #expect(try await acl(users[1], "chat-in/\(uid)", 4) == .forbidden)
            #expect(try await acl(users[1], "#", 4) == .forbidden)
            #expect(try await acl(users[1], "messenger-notifications/\(userID(users[1]))", 4) == .ok)
            #expect(try await acl(users[1], "messenger-notifications/\(userID(users[2]))", 4) == .forbidden)
            let server = try await post(
                broker, "/internal/broker/acl",
                #"{"username":"parley-server","clientid":"s","topic":"chat-room/\#(uid)","acc":2}"#)
            #expect(server.status == .ok)
            let badAcc = try await post(
                broker, "/internal/broker/acl", #"{"username":"1","clientid":"c","topic":"x","acc":3}"#)
            #expect(badAcc.status == .badRequest)
        }
    }

    @Test func emqxAuthenticationAndAuthorization() async throws {
        try await withRouters { api, broker in
            let login = try await api.signUp()
            let (user, password, client) = (login.mqtt.username, login.mqtt.password, login.mqtt.clientId)
            let allowed = try await post(
                broker, "/internal/broker/emqx/authn",
                #"{"clientid":"\#(client)","username":"\#(user)","password":"\#(password)"}"#,
                as: BrokerAuthController.EMQXAnswer.self)
            #expect(allowed.status == .ok)
            #expect(allowed.reply?.result == "allow")
            #expect(allowed.reply?.is_superuser == false)
            // The connection ends when the MQTT password does.
            #expect(allowed.reply?.expire_at == Int64(login.mqtt.expiresAt.timeIntervalSince1970))
            let server = try await post(
                broker, "/internal/broker/emqx/authn",
                #"{"clientid":"s","username":"parley-server","password":"server-secret"}"#,
                as: BrokerAuthController.EMQXAnswer.self)
            #expect(server.reply?.is_superuser == true)
            // Left out, not null: no end.
            #expect(try decode(WireKeys.self, from: server.text).keys.contains("expire_at") == false)
            let denied = try await post(
                broker, "/internal/broker/emqx/authn",
                #"{"clientid":"\#(client)","username":"\#(user)","password":"x"}"#,
                as: BrokerAuthController.EMQXAnswer.self)
            #expect(denied.status == .ok)
            #expect(denied.reply?.result == "deny")

            let own = try await post(
                broker, "/internal/broker/emqx/authz",
                #"{"clientid":"\#(client)","username":"\#(user)","topic":"messenger-notifications/\#(user)","action":"subscribe"}"#,
                as: BrokerAuthController.EMQXAnswer.self
            )
            #expect(own.reply?.result == "allow")
            let publish = try await post(
                broker, "/internal/broker/emqx/authz",
                #"{"clientid":"\#(client)","username":"\#(user)","topic":"messenger-notifications/\#(user)","action":"publish"}"#,
                as: BrokerAuthController.EMQXAnswer.self
            )
            #expect(publish.reply?.result == "deny")
            let bad = try await post(
                broker, "/internal/broker/emqx/authz",
                #"{"clientid":"c","username":"\#(user)","topic":"x","action":"delete"}"#)
            #expect(bad.status == .badRequest)
        }
    }
}
