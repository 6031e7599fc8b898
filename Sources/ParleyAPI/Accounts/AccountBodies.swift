import Foundation
import ParleyCore

/// The JSON shapes of `rest-api.md` for accounts, sessions, devices and administration.

/// A user; `email` only for the user themselves and for system administrators.
struct UserResponse: ListItem, Equatable {
    static let listKey = "users"

    let id: Int64
    let email: String?
    let firstName: String
    let lastName: String
    let createdAt: Date
    @NullEncoded var avatar: FileObject?

    /// The user as they themselves (or an administrator) see their account: with the e-mail.
    /// Anyone else's view is ``init(_:to:)``; there is no default.
    init(own user: User) {
        self.init(user, showingEmail: true)
    }

    /// The user as `viewer` sees them.
    init(_ user: User, to viewer: AuthenticatedUser) {
        self.init(user, showingEmail: viewer.userID == user.id || viewer.isAdmin)
    }

    private init(_ user: User, showingEmail: Bool) {
        id = user.id
        email = showingEmail ? user.email : nil
        firstName = user.firstName
        lastName = user.lastName
        createdAt = user.createdAt
        avatar = user.avatar
    }
}

struct RegisterRequest: Decodable {
    let email: String
    let password: String
    let firstName: String
    let lastName: String
}

struct LoginRequest: Decodable {
    let email: String
    let password: String
    let device: DeviceBody?

    struct DeviceBody: Decodable {
        let platform: Device.Platform
        let name: String?
        let pushToken: String?
        let pushProvider: PushProvider?

        func registration() throws -> DeviceRegistration {
            if let name, name.count > 200 {
                throw ParleyError.invalidRequest("device.name must be at most 200 characters", field: "device.name")
            }
            var push: PushRegistration?
            if let pushToken {
                guard let pushProvider else {
                    throw ParleyError.invalidRequest(
                        "device.pushProvider is required with a pushToken", field: "device.pushProvider")
                }
                push = try PushRegistration(provider: pushProvider, token: pushToken)
            }
            return DeviceRegistration(platform: platform, name: name, push: push)
        }
    }
}

struct RefreshRequest: Decodable {
    let refreshToken: String
}

/// Where clients reach the broker; part of every login answer.
public struct MQTTEndpoint: Sendable {
    public var host: String
    public var port: Int
    public var tls: Bool
    public var websocketPort: Int?

    public init(host: String, port: Int, tls: Bool, websocketPort: Int?) {
        self.host = host
        self.port = port
        self.tls = tls
        self.websocketPort = websocketPort
    }
}

struct LoginResponse: Codable, Sendable {
    struct MQTT: Codable, Sendable {
        let host: String
        let port: Int
        let tls: Bool
        let websocketPort: Int?
        let clientId: String
        let username: String
        let password: String
        let expiresAt: Date

        init(endpoint: MQTTEndpoint, clientID: String, userID: Int64, password: String, expiresAt: Date) {
            (host, port, tls, websocketPort) = (endpoint.host, endpoint.port, endpoint.tls, endpoint.websocketPort)
            (clientId, username, self.password, self.expiresAt) = (clientID, String(userID), password, expiresAt)
        }

        init(endpoint: MQTTEndpoint, _ bot: BotMQTTCredentials) {
            self.init(
                endpoint: endpoint, clientID: bot.clientID, userID: bot.userID, password: bot.password,
                expiresAt: bot.expiresAt)
        }
    }

    let accessToken: String
    let refreshToken: String
    let expiresIn: Int
    let user: UserResponse
    let deviceId: Int64?
    let mqtt: MQTT

    init(_ signedIn: AccountService.SignedIn, endpoint: MQTTEndpoint) {
        accessToken = signedIn.tokens.access.value
        refreshToken = signedIn.tokens.refresh.value
        expiresIn = max(0, Int(signedIn.tokens.accessExpiresAt.timeIntervalSinceNow.rounded()))
        user = UserResponse(own: signedIn.user)
        deviceId = signedIn.deviceID
        mqtt = MQTT(
            endpoint: endpoint, clientID: signedIn.clientID, userID: signedIn.user.id,
            password: signedIn.mqttPassword, expiresAt: signedIn.mqttExpiresAt)
    }
}

struct ProfileRequest: Decodable {
    let firstName: String?
    let lastName: String?
    let password: String?
    let currentPassword: String?
}

struct DevicesResponse: Codable, Sendable {
    let devices: [DeviceResponse]
}

struct DeviceResponse: Codable, Sendable {
    let id: Int64
    let platform: Device.Platform
    @NullEncoded var name: String?
    @NullEncoded var pushProvider: PushProvider?
    let hasPushToken: Bool
    let createdAt: Date
    let lastSeenAt: Date

    init(_ device: Device) {
        id = device.id
        platform = device.platform
        name = device.name
        pushProvider = device.pushProvider
        hasPushToken = device.hasPushToken
        createdAt = device.createdAt
        lastSeenAt = device.lastSeenAt
    }
}

struct PushRequest: Decodable {
    let pushToken: String
    let pushProvider: PushProvider
}

struct AdminUserRequest: Decodable {
    let email: String
    let password: String
    let firstName: String
    let lastName: String
    let isAdmin: Bool?
}

struct GroupRequest: Decodable {
    let name: String
}

struct RoleRequest: Decodable {
    let code: String
    let name: String
    let rank: Int?
}

struct ApplicationsResponse: Codable, Sendable {
    let apps: [Application]
}
