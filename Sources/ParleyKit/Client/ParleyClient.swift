import Foundation
import NIOCore
import NIOSSL
import OpenAPIRuntime

/// Parley for an app: sign in, the room list kept current, each room's events in order and
/// once, and sends that resolve with the stored message (see <doc:GettingStarted>).
///
/// ```swift
/// let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)
/// try await parley.signIn(email: "ada@example.com", password: "…")
/// for await event in await parley.messages(in: roomID) { … }
/// let stored = try await parley.send("Hello", in: roomID).stored()
/// ```
///
/// It reads the room topics and the user's notification topic over MQTT, writes on `chat-in`
/// and falls back to the REST send with the same uid when the broker cannot take a message;
/// after a reconnect it fetches what it missed (`after=seq`, `changedSince`).
public actor ParleyClient {
    public nonisolated let baseURL: URL
    /// The broker to use instead of the one the sign-in names (host, port and TLS of its
    /// `mqtt` credentials).
    let broker: MQTTEndpoint?
    /// How long a message published on `chat-in` may go without its canonical event before it
    /// is sent over REST as well (the same uid: stored once).
    let confirmationTimeout: Duration
    /// How long before its expiry an access token is renewed (``ParleyTokens``).
    let renewBefore: Duration
    /// The HTTP client REST requests go through.
    let transport: any ClientTransport
    let account: Client
    var session: Session?
    var rooms: [Int: ParleyRoom] = [:]
    var timelines: [Int: RoomTimeline] = [:]
    /// When the last complete read of the room list began: a room created after it is new to
    /// the user, every message of it to be told.
    var roomsListedAt: Date?
    /// Rooms whose gap is being filled now.
    var repairing: Set<Int> = []
    /// Hashes of recent events other than new messages (those are told once by seq).
    var recentHashes = RecentKeys(capacity: 4_096)
    var pending: [String: ParleyOutgoingMessage] = [:]
    /// When the broker connection was last lost: edits and deletions since are fetched.
    var disconnectedAt: Date?
    let events = Broadcast<ParleyEvent>()
    let roomLists = Broadcast<[ParleyRoom]>()

    /// A signed-in user's connections.
    struct Session {
        let userID: Int
        let deviceID: Int
        let tokens: ParleyTokens
        let rest: Client
        let link: MQTTLink
        let outbox: AsyncStream<ParleyOutgoingMessage>.Continuation
        var tasks: [Task<Void, Never>]
    }

    /// - Parameters:
    ///   - broker: where the broker is, when not where the sign-in's credentials say (a
    ///     WebSocket endpoint through a proxy, a test broker).
    ///   - confirmationTimeout: how long a published message waits for its canonical event
    ///     before it is also sent over REST.
    ///   - renewBefore: how long before its expiry an access token is renewed (one the server
    ///     refuses as expired is renewed then, and the request sent again).
    ///   - transport: the HTTP client of REST requests: by default URLSession's on Apple's
    ///     platforms and AsyncHTTPClient elsewhere (``ParleyREST/platformTransport()``); an
    ///     app's own configured `URLSessionTransport` (a background or proxied session) goes here.
    public init(
        baseURL: URL, broker: MQTTEndpoint? = nil, confirmationTimeout: Duration = .seconds(10),
        renewBefore: Duration = .seconds(30), transport: any ClientTransport = ParleyREST.platformTransport()
    ) {
        self.baseURL = baseURL
        self.broker = broker
        self.confirmationTimeout = confirmationTimeout
        self.renewBefore = renewBefore
        self.transport = transport
        account = ParleyREST.throwingProblems(baseURL: baseURL, tokens: nil, transport: transport)
    }

    // MARK: Signing in and out

    /// Signs in with a password and connects.
    public func signIn(email: String, password: String) async throws {
        let login = try await account.postV1AuthLogin(body: .json(.init(email: email, password: password))).ok.body
            .json
        try await start(login)
    }

    /// Signs in with a token of the app's identity provider (the token exchange) and connects.
    public func signIn(token: String) async throws {
        let login = try await account.postV1AuthToken(
            body: .json(
                .init(
                    grantType: .init(stringLiteral: "urn:ietf:params:oauth:grant-type:token-exchange"),
                    subjectToken: token, subjectTokenType: .init(stringLiteral: "urn:ietf:params:oauth:token-type:jwt")
                ))
        ).ok.body.json
        try await start(login)
    }

    /// Ends the session on the server and here: the broker connection closes, and messages
    /// still pending resolve as ``ParleyOutgoingMessage/State/abandoned``.
    public func signOut() async {
        guard let session else { return }
        _ = try? await session.rest.postV1AuthLogout()
        await stop(session)
    }

    /// The signed-in user's id; nil while signed out.
    public var userID: Int? { session?.userID }

    /// The session's tokens (to keep them, ``ParleyTokens/setOnRenewal(_:)``).
    public var tokens: ParleyTokens? { session?.tokens }

    /// The REST client of the session, for what this type does not wrap.
    public var rest: Client? { session?.rest }

    /// Where this device's pushes go: APNs or FCM (for a device token), or `webhook`.
    public enum PushProvider: String, Sendable {
        case apns, fcm, webhook
    }

    /// Registers the device's push token (`PUT /v1/devices/{id}/push`) for the session's
    /// device: new messages reach it while the app is not connected. Call it again when the
    /// platform hands the app a new token; signing out drops it.
    public func registerPushToken(_ token: String, provider: PushProvider) async throws {
        let session = try signedIn()
        _ = try await session.rest.putV1DevicesIdPush(
            path: .init(id: session.deviceID),
            body: .json(.init(pushToken: token, pushProvider: .init(stringLiteral: provider.rawValue)))
        ).noContent
    }

    // MARK: Rooms and events

    /// The room list, most recent first.
    public var roomList: [ParleyRoom] {
        rooms.values.sorted {
            ($0.lastMessage?.createdAt ?? .distantPast) > ($1.lastMessage?.createdAt ?? .distantPast)
        }
    }

    public func room(_ id: Int) -> ParleyRoom? { rooms[id] }

    /// The room list each time it changes (a message, a read, a room added or changed).
    public func roomListChanges() -> AsyncStream<[ParleyRoom]> { roomLists.stream(buffer: 1) }

    /// The room's events from now on: new messages once each and in `seq` order (gaps after a
    /// reconnect filled from the history), edits, deletions, reactions, reads, typing, room
    /// changes, and refusals of this user's messages to it.
    public func messages(in roomID: Int) -> AsyncStream<ParleyEvent> {
        events.stream { $0.roomID == roomID }
    }

    /// Every room's events, as ``messages(in:)`` tells each.
    public func allEvents() -> AsyncStream<ParleyEvent> { events.stream() }

    /// The two-party room with `userID`, made at its first use.
    public func directRoom(with userID: Int) async throws -> ParleyRoom {
        let rest = try signedIn().rest
        let room: Components.Schemas.Room =
            switch try await rest.putV1RoomsDirectUserId(path: .init(userId: userID)) {
            case .ok(let ok): try ok.body.json
            case .created(let created): try created.body.json
            default: throw ParleyClientError.unexpectedAnswer
            }
        try await loadRooms()
        return rooms[room.id] ?? ParleyRoom(room)
    }

    /// The room's history: up to `limit` messages before `seq` (the newest when nil), oldest first.
    public func history(in roomID: Int, before seq: Int? = nil, limit: Int = 50) async throws -> [ParleyMessage] {
        let rest = try signedIn().rest
        return try await rest.getV1RoomsIdMessages(path: .init(id: roomID), query: .init(before: seq, limit: limit))
            .ok.body.json.messages.map(ParleyMessage.init)
    }

    func signedIn() throws -> Session {
        guard let session else { throw ParleyClientError.signedOut }
        return session
    }

    func publishRoomList() { roomLists.send(roomList) }
}

public enum ParleyClientError: Error, Sendable, Equatable {
    /// Not signed in (or signed out meanwhile).
    case signedOut
    /// No such room in the user's room list.
    case unknownRoom(Int)
    /// The server answered what its contract does not say (not a Parley server?).
    case unexpectedAnswer
}

/// The last `capacity` keys seen, to drop a repeated delivery.
struct RecentKeys: Sendable {
    private var keys: Set<String> = []
    private var order: [String] = []
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Whether `key` is new; remembers it.
    mutating func insert(_ key: String) -> Bool {
        guard keys.insert(key).inserted else { return false }
        order.append(key)
        if order.count > capacity {
            keys.remove(order.removeFirst())
        }
        return true
    }
}
