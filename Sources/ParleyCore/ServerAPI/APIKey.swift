import Foundation

/// What a server key may do. `admin` opens everything the others open, and the admin routes.
public enum APIKeyScope: String, Sendable, Codable, CaseIterable, Hashable {
    case usersWrite = "users:write"
    case roomsWrite = "rooms:write"
    case messagesWrite = "messages:write"
    case messagesRead = "messages:read"
    case admin
}

/// A key the app's backend holds to call the server API (`Authorization: Bearer pk_…`). Its
/// secret is answered once, when issued or rotated, and stored only as its SHA-256.
public struct APIKey: Sendable, Equatable, Codable {
    public let id: Int64
    public let name: String
    public let scopes: [APIKeyScope]
    /// Whose users the server routes name by `externalId` (a `sub` of this issuer).
    public let issuer: String
    /// The administrator who issued it (an `admin` key acts as them on the admin routes); null
    /// once their account is gone.
    @NullEncoded public var createdById: Int64?
    /// The bot this key is (``Bot``): it acts only as the bot, in the bot's rooms; null for a
    /// key of the app's server.
    @NullEncoded public var botId: Int64?
    public let createdAt: Date
    @NullEncoded public var expiresAt: Date?
    @NullEncoded public var lastUsedAt: Date?

    public init(
        id: Int64, name: String, scopes: [APIKeyScope], issuer: String, createdById: Int64?, botId: Int64? = nil,
        createdAt: Date, expiresAt: Date?, lastUsedAt: Date?
    ) {
        self.botId = botId
        self.id = id
        self.name = name
        self.scopes = scopes
        self.issuer = issuer
        self.createdById = createdById
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
    }

    /// Whether the key opens what needs `scope`.
    public func allows(_ scope: APIKeyScope) -> Bool { scopes.contains(scope) || scopes.contains(.admin) }
}

/// A key with its secret: the only answer that carries it (`POST /v1/admin/api-keys`, a rotation).
public typealias IssuedAPIKey = WithSecret<APIKey>

extension WithSecret where Value == APIKey {
    public init(key: APIKey, secret: String) { self.init(key, secret: secret) }
    public var key: APIKey { value }
}

/// Who called the server API or an admin route: a key, or a signed-in administrator.
public enum ServerActor: Sendable, Equatable {
    case key(APIKey)
    case user(Int64)
}

/// One recorded use of the server API or the admin routes.
public struct AuditEntry: Sendable, Equatable, Codable {
    public struct Actor: Sendable, Equatable, Codable {
        /// `key` or `user`.
        public let type: String
        public let id: Int64

        public init(type: String, id: Int64) {
            self.type = type
            self.id = id
        }

        public init(_ actor: ServerActor) {
            switch actor {
            case .key(let key): (type, id) = ("key", key.id)
            case .user(let userID): (type, id) = ("user", userID)
            }
        }
    }

    public let id: Int64
    public let at: Date
    public let actor: Actor
    /// The route's method and path pattern (`POST /v1/server/rooms/{id}/messages`).
    public let action: String
    /// The path as called (`/v1/server/rooms/12/messages`).
    public let target: String
    @NullEncoded public var address: String?

    public init(id: Int64, at: Date, actor: Actor, action: String, target: String, address: String?) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target
        self.address = address
    }
}
