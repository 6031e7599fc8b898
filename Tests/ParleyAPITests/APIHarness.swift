import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ServiceLifecycle

@testable import ParleyAPI
@testable import parley

/// Every API route over real PostgreSQL (a fresh database) and the suite's Redis: the serve
/// graph the tests share.
struct APIHarness: Sendable {
    static let mqttKey = try! MQTTTokenKey(bytes: Array(repeating: 42, count: 32))
    static let endpoint = MQTTEndpoint(host: "mqtt.example.test", port: 8883, tls: true, websocketPort: 8083)

    static let fileLinks = FileLinks.testing

    /// Where uploads go.
    enum Store: String, CaseIterable, Sendable { case filesystem, postgres }

    let database: PostgresPool
    let redis: RedisConnectionPool
    let policy: AccountPolicy
    let namespace = "test-\(UUID().uuidString.prefix(8))"
    let blobStore: any BlobStore
    let uploadLimit: Int64
    /// The limits against abuse: out of the way unless a test sets them (the suite's users
    /// send bursts); `AbuseLimitsTests` checks the product's defaults.
    var abuseLimits = APIHarness.unlimited
    static let unlimited = AbuseLimits(
        messages: RateBucket(perSecond: 1_000_000, burst: 1_000_000), roomsPerHour: 1_000_000,
        membersPerHour: 1_000_000,
        uploadsPerDay: 1_000_000)
    /// Media jobs queued by uploads, when a test wants them.
    let mediaJobs: (any JobQueue)?
    /// Erasure and export jobs queued by requests, run by ``maintenance()``.
    let maintenanceJobs = RecordedJobs()
    /// The issuers whose tokens sign in, and their keys: none unless a test trusts one.
    var issuers: [TrustedIssuer] = []
    var issuerKeys: IssuerKeys?
    var linkVerifiedEmail = false
    /// Where webhooks may go: https only, no loopback, unless a test opens it.
    var outboundRule = OutboundRule()
    /// The message hook, when a test sets one.
    var messageHook: MessageHookGate?
    /// `PARLEY_RECEIPTS_MAX_MEMBERS`, as a test sets it.
    var receiptsMaxMembers = MessageReceipts.defaultMaxMembers

    static func make(
        policy: AccountPolicy = AccountPolicy(rateLimitWindow: .seconds(60)), store: Store = .filesystem,
        uploadLimit: Int64 = 100 * 1024 * 1024, mediaJobs: (any JobQueue)? = nil
    ) async throws -> APIHarness {
        let services = try TestServices.shared()
        let configuration = try await services.makeDatabase(migrated: true)
        let database = PostgresPool(configuration: configuration, logger: .quiet)
        let blobStore: any BlobStore =
            switch store {
            case .filesystem:
                try FilesystemBlobStore(root: TestScratch.path("parley-files"))
            case .postgres: PostgresBlobStore(database: database, logger: .quiet, chunkSize: 64 * 1024)
            }
        return APIHarness(
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
                receiptsMaxMembers: receiptsMaxMembers, abuseLimits: abuseLimits, store: blobStore,
                mediaJobs: mediaJobs, maintenanceJobs: maintenanceJobs,
                uploadLimit: uploadLimit, issuers: issuers, issuerKeys: issuerKeys,
                linkVerifiedEmail: linkVerifiedEmail, outboundRule: outboundRule, messageHook: messageHook,
                logger: { _ in .quiet }),
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

    /// Runs `body` with the database pool running and a client for one API instance (in memory,
    /// or `.live` on a loopback port).
    func run(
        broker: any BrokerSessionControl = NoBroker(), mode: TestingSetup = .router,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let features = features(broker: broker)
        let application = Application(
            router: ParleyRoutes.forTesting(features: features).publicRouter(), logger: .quiet)
        // What `parley serve` runs beside its listeners (the receipts' coalescer) runs too.
        let background = ServiceGroup(
            configuration: .init(
                services: features.background.map { .init(service: $0) }, gracefulShutdownSignals: [], logger: .quiet))
        try await database.withRunningClient { _ in
            let running = Task { try await background.run() }
            do {
                try await application.test(mode, body)
            } catch {
                await background.triggerGracefulShutdown()
                _ = try? await running.value
                throw error
            }
            await background.triggerGracefulShutdown()
            try await running.value
        }
    }

    var roomService: RoomService {
        RoomService(
            rooms: PostgresRoomRepository(database: database, logger: .quiet, fileLinks: Self.fileLinks),
            messages: PostgresMessageRepository(database: database, logger: .quiet, fileLinks: Self.fileLinks))
    }

    struct NoBroker: BrokerSessionControl {
        func end(sessions: [Int64], clientIDs: [String]) async {}
    }
}

/// An answer as sent.
struct JSONAnswer {
    let status: HTTPResponse.Status
    /// The text as a JSON object (empty when it is none), for checks of the wire's own shape.
    let json: [String: Any]
    let headers: HTTPFields
    let text: String

    /// A refusal as the API writes it (problem+json); nil for anything else.
    var problem: ProblemDetails? { try? decode(ProblemDetails.self, from: text) }
}

/// JSON helpers for requests and answers.
extension TestClientProtocol {
    @discardableResult
    func json(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, body: String? = nil
    ) async throws -> JSONAnswer {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        {
            response in
            let text = String(buffer: response.body)
            let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
            return JSONAnswer(status: response.status, json: json, headers: response.headers, text: text)
        }
    }

    /// A successful answer decoded into the API's own type, as a client written against the
    /// contract reads it; anything else (an error status, a shape that does not decode) throws.
    func decoded<Answer: Decodable>(
        _ type: Answer.Type, _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, body: String? = nil
    ) async throws -> Answer {
        let answer = try await json(method, uri, token: token, body: body)
        guard (200..<300).contains(answer.status.code) else {
            throw HarnessError("\(method) \(uri) answered \(answer.status): \(answer.text)")
        }
        do {
            return try decode(Answer.self, from: answer.text)
        } catch {
            throw HarnessError("\(method) \(uri) answered no \(Answer.self): \(error) in \(answer.text)")
        }
    }

    /// Registers and logs in a fresh user; returns the login answer.
    func signUp(
        email: String = "user-\(UUID().uuidString.prefix(8))@example.com", password: String = "correct horse",
        device: String? = nil
    ) async throws -> LoginResponse {
        let registered = try await json(
            .post, "/v1/auth/register",
            body: #"{"email":"\#(email)","password":"\#(password)","firstName":"Test","lastName":"User"}"#)
        guard registered.status == .created else { throw HarnessError("register failed: \(registered.text)") }
        let deviceJSON = device.map { #","device":\#($0)"# } ?? ""
        return try await decoded(
            LoginResponse.self, .post, "/v1/auth/login",
            body: #"{"email":"\#(email)","password":"\#(password)"\#(deviceJSON)}"#)
    }

    /// `count` fresh users, logged in.
    func signUp(count: Int) async throws -> [LoginResponse] {
        var logins: [LoginResponse] = []
        for _ in 0..<count { logins.append(try await signUp()) }
        return logins
    }

    /// Sends a message over REST; the stored message (201 new, 200 the same uid again).
    @discardableResult
    func send(_ content: String = "m", uid: String, to roomID: Int, as sender: LoginResponse) async throws -> Message {
        try await decoded(
            Message.self, .post, "/v1/rooms/\(roomID)/messages", token: token(sender),
            body: try jsonText(["content": content, "uid": uid]))
    }

    /// One page of a room's history.
    func history(_ roomID: Int, _ query: String = "", as reader: LoginResponse) async throws -> MessagesResponse {
        try await decoded(MessagesResponse.self, .get, "/v1/rooms/\(roomID)/messages?\(query)", token: token(reader))
    }

    /// Every page of a list from `uri` on, following `nextCursor` (at most `limit` pages); each
    /// page as `page` reads it. `following` makes the next page's URI from a cursor (by
    /// default `uri` with `cursor=` added).
    func pages<Page: Decodable, Item>(
        _ type: Page.Type, _ uri: String, following: ((String) -> String)? = nil, token: String, limit: Int = 20,
        _ page: (Page) -> (items: [Item], nextCursor: String?)
    ) async throws -> [[Item]] {
        var pages: [[Item]] = []
        var next: String? = uri
        while let current = next, pages.count < limit {
            let answer = try await json(.get, current, token: token)
            // The contract: `nextCursor` is always there, null on the last page.
            guard answer.status == .ok, answer.json.keys.contains("nextCursor") else {
                throw HarnessError("\(current) answered \(answer.status) without nextCursor: \(answer.text)")
            }
            let (items, cursor) = page(try decode(Page.self, from: answer.text))
            pages.append(items)
            next = cursor.map { following?($0) ?? uri + (uri.contains("?") ? "&" : "?") + "cursor=\($0)" }
        }
        return pages
    }
}

extension TestClientProtocol {
    /// A multiparty room of three new users: the creator (admin), a writer and a reader.
    func roomOfThree() async throws -> (id: Int, users: [LoginResponse]) {
        let users = try await signUp(count: 3)
        let room = try await multipartyRoom(
            by: users[0], members: [(users[1], "writer"), (users[2], "reader")], name: "T",
            firstMessage: (content: "first", uid: "first"))
        return (room.id, users)
    }

    /// A multiparty room `creator` makes (as its admin) with `members` in their roles and a
    /// first message (`seq` 1); its id and uid.
    func multipartyRoom(
        by creator: LoginResponse, members: [(LoginResponse, String)], name: String = "R",
        firstMessage: (content: String, uid: String) = ("hi", "0")
    ) async throws -> (id: Int, uid: String) {
        let room = try await createRoom(by: creator, members: members, name: name, firstMessage: firstMessage)
        return (Int(room.id), room.uid)
    }

    /// `POST /v1/rooms`'s answer: the room as its creator sees it.
    func createRoom(
        by creator: LoginResponse, members: [(LoginResponse, String)], name: String,
        firstMessage: (content: String, uid: String)
    ) async throws -> RoomResponse {
        let body = NewRoom(
            name: name, members: members.map { NewRoom.Member(userId: userID($0.0), role: $0.1) },
            firstMessage: ["content": firstMessage.content, "uid": firstMessage.uid])
        return try await decoded(RoomResponse.self, .post, "/v1/rooms", token: token(creator), body: try jsonText(body))
    }
}

/// `POST /v1/rooms`'s body: the API reads it (``CreateRoomRequest``) but never writes one.
struct NewRoom: Encodable {
    struct Member: Encodable {
        let userId: Int64
        let role: String
    }
    let name: String
    let members: [Member]
    /// Left out when nil: a room without messages.
    var firstMessage: [String: String]? = nil
}

/// An answer's body as the API's own type, whatever its status (the caller checks that).
func decode<Answer: Decodable>(_ type: Answer.Type, from text: String) throws -> Answer {
    try JSONCoding.decoder.decode(Answer.self, from: Data(text.utf8))
}

/// A request's body as JSON text.
func jsonText(_ value: some Encodable) throws -> String {
    String(decoding: try JSONCoding.encoder.encode(value), as: UTF8.self)
}

func token(_ login: LoginResponse) -> String { login.accessToken }
func userID(_ login: LoginResponse) -> Int64 { login.user.id }

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
