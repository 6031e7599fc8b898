import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ParleyAPI
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport

@testable import parley

/// The account routes over real PostgreSQL (a fresh database) and the suite's Redis.
struct AccountsHarness: Sendable {
    static let mqttKey = try! MQTTTokenKey(bytes: Array(repeating: 42, count: 32))
    static let endpoint = MQTTEndpoint(host: "mqtt.example.test", port: 8883, tls: true, websocketPort: 8083)

    static let fileLinks = FileLinks(key: SymmetricKey(data: Array(repeating: UInt8(7), count: 32)))

    /// Where uploads go.
    enum Store: String, CaseIterable, Sendable { case filesystem, postgres }

    let database: PostgresPool
    let redis: RedisConnectionPool
    let policy: AccountPolicy
    let namespace = "test-\(UUID().uuidString.prefix(8))"
    let blobStore: any BlobStore
    let uploadLimit: Int64
    /// Media jobs queued by uploads, when a test wants them.
    let mediaJobs: (any JobQueue)?

    static func make(
        policy: AccountPolicy = AccountPolicy(rateLimitWindow: .seconds(60)), store: Store = .filesystem,
        uploadLimit: Int64 = 100 * 1024 * 1024, mediaJobs: (any JobQueue)? = nil
    ) async throws -> AccountsHarness {
        let services = try TestServices.shared()
        let configuration = try await services.makeDatabase(migrated: true)
        let database = PostgresPool(configuration: configuration, logger: .quiet)
        let blobStore: any BlobStore =
            switch store {
            case .filesystem:
                try FilesystemBlobStore(root: TestScratch.path("parley-files"))
            case .postgres: PostgresBlobStore(database: database, logger: .quiet, chunkSize: 64 * 1024)
            }
        return AccountsHarness(
            database: database, redis: RedisConnectionPool(configuration: services.redis(), logger: .quiet),
            policy: policy, blobStore: blobStore, uploadLimit: uploadLimit, mediaJobs: mediaJobs)
    }

    /// One API instance's features, wired by `parley serve`'s own graph over the test's
    /// adapters: its own session cache, trusted (as when its subscriber listens).
    func features(
        cache: SessionCache = Self.trustedCache(), broker: any BrokerSessionControl = NoBroker()
    ) -> ParleyRoutes.Features {
        ServeGraph.features(
            ServeGraph.Parts(
                postgres: database, redis: redis, broker: broker, mqttKey: Self.mqttKey, endpoint: Self.endpoint,
                accountPolicy: policy, bcryptCost: 4, rateLimitNamespace: namespace, fileLinks: Self.fileLinks,
                store: blobStore, mediaJobs: mediaJobs, uploadLimit: uploadLimit, logger: { _ in .quiet }),
            cache: cache)
    }

    /// The public router of one instance, as `parley serve` builds it.
    func publicRouter(
        cache: SessionCache = Self.trustedCache(), broker: any BrokerSessionControl = NoBroker()
    ) -> Router<ParleyRequestContext> {
        ParleyRoutes.forTesting(features: features(cache: cache, broker: broker)).publicRouter()
    }

    static func trustedCache() -> SessionCache {
        let cache = SessionCache()
        cache.setTrusted(true)
        return cache
    }

    /// Runs `body` with the database pool running and a client for one API instance.
    func run(
        broker: any BrokerSessionControl = NoBroker(),
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let application = Application(router: publicRouter(broker: broker), logger: .quiet)
        try await database.withRunningClient { _ in
            try await application.test(.router, body)
        }
    }

    var roomService: RoomService {
        RoomService(rooms: PostgresRoomRepository(database: database, logger: .quiet, fileLinks: Self.fileLinks))
    }

    struct NoBroker: BrokerSessionControl {
        func end(sessions: [Int64], clientIDs: [String]) async {}
    }
}

/// JSON helpers for requests and answers.
extension TestClientProtocol {
    @discardableResult
    func json(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, body: String? = nil
    ) async throws -> (status: HTTPResponse.Status, json: [String: Any], headers: HTTPFields, text: String) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        {
            response in
            let text = String(buffer: response.body)
            let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
            return (response.status, json, response.headers, text)
        }
    }

    /// Registers and logs in a fresh user; returns the login answer.
    func signUp(
        email: String = "user-\(UUID().uuidString.prefix(8))@example.com", password: String = "correct horse",
        device: String? = nil
    ) async throws -> [String: Any] {
        let registered = try await json(
            .post, "/v1/auth/register",
            body: #"{"email":"\#(email)","password":"\#(password)","firstName":"Test","lastName":"User"}"#)
        guard registered.status == .created else { throw HarnessError("register failed: \(registered.text)") }
        let deviceJSON = device.map { #","device":\#($0)"# } ?? ""
        let login = try await json(
            .post, "/v1/auth/login", body: #"{"email":"\#(email)","password":"\#(password)"\#(deviceJSON)}"#)
        guard login.status == .ok else { throw HarnessError("login failed: \(login.text)") }
        return login.json
    }
}

extension TestClientProtocol {
    /// A multiparty room of three new users: the creator (admin), a writer and a reader.
    func roomOfThree() async throws -> (id: Int, users: [[String: Any]]) {
        var users: [[String: Any]] = []
        for _ in 0..<3 { users.append(try await signUp()) }
        let room = try await multipartyRoom(
            by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "T",
            firstMessage: (content: "first", uid: "first"))
        return (room.id, users)
    }

    /// A multiparty room `creator` makes (as its admin) with `members` in their roles and a
    /// first message (`seq` 1); its id and uid.
    func multipartyRoom(
        by creator: [String: Any], members: [([String: Any], String)], name: String = "R",
        firstMessage: (content: String, uid: String) = ("hi", "0")
    ) async throws -> (id: Int, uid: String) {
        let body: [String: Any] = [
            "name": name, "members": members.map { ["userId": Int(userID($0.0)), "role": $0.1] },
            "firstMessage": ["content": firstMessage.content, "uid": firstMessage.uid],
        ]
        let answer = try await json(
            .post, "/v1/rooms", token: token(creator),
            body: String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
        guard let id = answer.json["id"] as? Int, let uid = answer.json["uid"] as? String else {
            throw HarnessError("the room was not created: \(answer.status) \(answer.text)")
        }
        return (id, uid)
    }
}

func token(_ login: [String: Any]) -> String { login["accessToken"] as? String ?? "" }
func userID(_ login: [String: Any]) -> Int64 {
    ((login["user"] as? [String: Any])?["id"] as? NSNumber)?.int64Value ?? 0
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
