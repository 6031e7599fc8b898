import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Sessions, devices, push tokens and MQTT client ids.
public struct PostgresSessionRepository: SessionRepository {
    let database: PostgresPool
    let logger: Logger

    public init(database: PostgresPool, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func openSession(
        userID: Int64, device: DeviceRegistration, tokens: IssuedTokens, clientID: String
    ) async throws -> (sessionID: Int64, deviceID: Int64) {
        try await database.transaction(logger: logger) { connection in
            let deviceID = try await upsertDevice(userID: userID, device: device, on: connection)
            if let push = device.push {
                try await storePushToken(userID: userID, deviceID: deviceID, push, on: connection)
            }
            let sessionID = try await connection.query(
                """
                INSERT INTO cloud.session (user_account_id, device_id, access_token_hash, access_expires_at,
                                           refresh_token_hash, refresh_expires_at)
                VALUES (\(userID), \(deviceID), \(Data(tokens.access.hash)), \(tokens.accessExpiresAt),
                        \(Data(tokens.refresh.hash)), \(tokens.refreshExpiresAt))
                RETURNING id
                """, logger: logger
            ).single(Int64.self)
            try await connection.query(
                """
                INSERT INTO cloud.user_account_mqtt_client_id (user_account_id, device_id, session_id, client_id)
                VALUES (\(userID), \(deviceID), \(sessionID), \(clientID))
                """, logger: logger)
            return (sessionID, deviceID)
        }
    }

    /// A login names no device id: a push token already registered to this user identifies
    /// the same installation; otherwise the login is a new device.
    private func upsertDevice(userID: Int64, device: DeviceRegistration, on connection: PostgresConnection)
        async throws -> Int64
    {
        if let push = device.push {
            let existing = try await connection.query(
                """
                SELECT p.device_id FROM notifications.user_push_token p
                WHERE p.provider = \(push.provider.rawValue) AND p.token = \(push.token)
                  AND p.user_account_id = \(userID)
                """, logger: logger
            ).first(Int64.self)
            if let existing {
                try await connection.query(
                    """
                    UPDATE cloud.device SET platform = \(device.platform.rawValue), name = \(device.name),
                           last_seen_at = now()
                    WHERE id = \(existing)
                    """, logger: logger)
                return existing
            }
        }
        return try await connection.query(
            """
            INSERT INTO cloud.device (user_account_id, platform, name)
            VALUES (\(userID), \(device.platform.rawValue), \(device.name)) RETURNING id
            """, logger: logger
        ).single(Int64.self)
    }

    /// One token per device; a token moving to another device (a reinstall, another
    /// account on the phone) leaves its old registration.
    private func storePushToken(
        userID: Int64, deviceID: Int64, _ push: PushRegistration, on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            DELETE FROM notifications.user_push_token
            WHERE provider = \(push.provider.rawValue) AND token = \(push.token) AND device_id <> \(deviceID)
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO notifications.user_push_token (user_account_id, device_id, provider, token)
            VALUES (\(userID), \(deviceID), \(push.provider.rawValue), \(push.token))
            ON CONFLICT (device_id) DO UPDATE
            SET provider = excluded.provider, token = excluded.token, updated_at = now()
            """, logger: logger)
    }

    public func authenticate(accessTokenHash: [UInt8], now: Date) async throws -> AuthenticatedUser? {
        let rows = try await database.client.query(
            """
            SELECT s.id, s.user_account_id, s.device_id, u.is_admin, s.access_expires_at
            FROM cloud.session s JOIN cloud.user_account u ON u.id = s.user_account_id
            WHERE s.access_token_hash = \(Data(accessTokenHash)) AND s.revoked_at IS NULL
              AND s.access_expires_at > \(now)
            """, logger: logger)
        for try await (sessionID, userID, deviceID, isAdmin, expiresAt) in rows.decode(
            (Int64, Int64, Int64?, Bool, Date).self)
        {
            return AuthenticatedUser(
                userID: userID, sessionID: sessionID, deviceID: deviceID, isAdmin: isAdmin, expiresAt: expiresAt)
        }
        return nil
    }

    public func refresh(refreshTokenHash: [UInt8], next: IssuedTokens, now: Date) async throws -> RefreshOutcome {
        let outcome: RefreshOutcome = try await database.transaction(logger: logger) { connection in
            let current = try await connection.query(
                """
                SELECT s.id, s.user_account_id, s.device_id, c.client_id
                FROM cloud.session s
                JOIN cloud.user_account_mqtt_client_id c ON c.session_id = s.id AND c.revoked_at IS NULL
                WHERE s.refresh_token_hash = \(Data(refreshTokenHash)) AND s.revoked_at IS NULL
                  AND s.refresh_expires_at > \(now)
                FOR UPDATE OF s
                """, logger: logger
            ).first((Int64, Int64, Int64?, String).self)
            if let (sessionID, userID, deviceID, clientID) = current {
                try await connection.query(
                    """
                    INSERT INTO cloud.spent_refresh_token (token_hash, session_id)
                    VALUES (\(Data(refreshTokenHash)), \(sessionID))
                    """, logger: logger)
                try await connection.query(
                    """
                    UPDATE cloud.session
                    SET access_token_hash = \(Data(next.access.hash)), access_expires_at = \(next.accessExpiresAt),
                        refresh_token_hash = \(Data(next.refresh.hash)), refresh_expires_at = \(next.refreshExpiresAt),
                        last_used_at = now()
                    WHERE id = \(sessionID)
                    """, logger: logger)
                if let deviceID {
                    try await connection.query(
                        "UPDATE cloud.device SET last_seen_at = now() WHERE id = \(deviceID)", logger: logger)
                }
                return .rotated(sessionID: sessionID, userID: userID, deviceID: deviceID, clientID: clientID)
            }
            let spent = try await connection.query(
                "SELECT session_id FROM cloud.spent_refresh_token WHERE token_hash = \(Data(refreshTokenHash))",
                logger: logger
            ).first(Int64.self)
            guard let spent else { return .invalid }
            return .reused(sessionID: spent, clientIDs: try await revoke(sessionID: spent, on: connection))
        }
        return outcome
    }

    public func revoke(sessionID: Int64) async throws -> [String] {
        try await database.transaction(logger: logger) { connection in
            try await revoke(sessionID: sessionID, on: connection)
        }
    }

    /// Revokes the session unless it already was (a replayed refresh token changes nothing
    /// the second time); answers its clients, now revoked too.
    private func revoke(sessionID: Int64, on connection: PostgresConnection, tellingBroker: Bool = true)
        async throws -> [String]
    {
        let device = try await connection.query(
            """
            UPDATE cloud.session SET revoked_at = now() WHERE id = \(sessionID) AND revoked_at IS NULL
            RETURNING device_id
            """,
            logger: logger
        ).first(Int64?.self)
        guard let device else { return [] }
        if let deviceID = device {
            try await connection.query(
                "DELETE FROM notifications.user_push_token WHERE device_id = \(deviceID)", logger: logger)
        }
        let clientIDs = try await connection.query(
            """
            UPDATE cloud.user_account_mqtt_client_id SET revoked_at = now()
            WHERE session_id = \(sessionID) AND revoked_at IS NULL RETURNING client_id
            """, logger: logger
        ).all(String.self)
        if tellingBroker {
            try await Self.tellBroker(ended: [sessionID], clientIDs: clientIDs, on: connection, logger: logger)
        }
        return clientIDs
    }

    /// The broker hears of ended sessions through the outbox too, in the transaction that ends
    /// them: the caller tells it at once (``ParleyCore/BrokerSessionControl``), but a broker or
    /// management API that is down then would keep the session's clients connected, and a
    /// broker that authorises a subscription once (EMQX) delivering to them. The relay retries
    /// until it is applied; the plugin keeps a revocation it already has once, and EMQX takes
    /// the kick of a client already gone as done.
    static func tellBroker(
        ended sessions: [Int64], clientIDs: [String], on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !sessions.isEmpty || !clientIDs.isEmpty else { return }
        try await Outbox.record(
            .sessionsEnded(SessionsEnded(sessionIds: sessions, clientIds: clientIDs)), on: connection, logger: logger)
    }

    public func revokeOthers(userID: Int64, except sessionID: Int64) async throws -> (
        sessions: [Int64], clientIDs: [String]
    ) {
        try await database.transaction(logger: logger) { connection in
            let sessions = try await connection.query(
                """
                SELECT id FROM cloud.session
                WHERE user_account_id = \(userID) AND id <> \(sessionID) AND revoked_at IS NULL
                """, logger: logger
            ).all(Int64.self)
            var clientIDs: [String] = []
            for session in sessions {
                clientIDs += try await revoke(sessionID: session, on: connection, tellingBroker: false)
            }
            try await Self.tellBroker(ended: sessions, clientIDs: clientIDs, on: connection, logger: logger)
            return (sessions, clientIDs)
        }
    }

    public func isClientActive(clientID: String, userID: Int64, sessionID: Int64) async throws -> Bool {
        try await database.client.query(
            """
            SELECT 1 FROM cloud.user_account_mqtt_client_id c JOIN cloud.session s ON s.id = c.session_id
            WHERE c.client_id = \(clientID) AND c.user_account_id = \(userID) AND c.session_id = \(sessionID)
              AND c.revoked_at IS NULL AND s.revoked_at IS NULL
            """, logger: logger
        ).first(Int.self) != nil
    }

    public func devices(userID: Int64) async throws -> [Device] {
        let rows = try await database.client.query(
            """
            SELECT d.id, d.platform, d.name, p.provider, p.token IS NOT NULL, d.created_at, d.last_seen_at
            FROM cloud.device d LEFT JOIN notifications.user_push_token p ON p.device_id = d.id
            WHERE d.user_account_id = \(userID) ORDER BY d.id
            """, logger: logger)
        var devices: [Device] = []
        for try await (id, platform, name, provider, hasToken, createdAt, lastSeenAt) in rows.decode(
            (Int64, String, String?, String?, Bool, Date, Date).self)
        {
            devices.append(
                Device(
                    id: id, platform: Device.Platform(rawValue: platform) ?? .other, name: name,
                    pushProvider: provider.flatMap(PushProvider.init(rawValue:)), hasPushToken: hasToken,
                    createdAt: createdAt, lastSeenAt: lastSeenAt))
        }
        return devices
    }

    public func setPushToken(userID: Int64, deviceID: Int64, registration: PushRegistration) async throws -> Bool {
        try await database.transaction(logger: logger) { connection in
            let owned = try await connection.query(
                "SELECT 1 FROM cloud.device WHERE id = \(deviceID) AND user_account_id = \(userID) FOR UPDATE",
                logger: logger
            ).first(Int.self)
            guard owned != nil else { return false }
            try await storePushToken(userID: userID, deviceID: deviceID, registration, on: connection)
            return true
        }
    }

    public func deleteDevice(userID: Int64, deviceID: Int64) async throws -> (sessions: [Int64], clientIDs: [String])? {
        try await database.transaction(logger: logger) { connection in
            let owned = try await connection.query(
                "SELECT 1 FROM cloud.device WHERE id = \(deviceID) AND user_account_id = \(userID) FOR UPDATE",
                logger: logger
            ).first(Int.self)
            guard owned != nil else { return nil }
            let sessions = try await connection.query(
                "SELECT id FROM cloud.session WHERE device_id = \(deviceID) AND revoked_at IS NULL", logger: logger
            ).all(Int64.self)
            let clientIDs = try await connection.query(
                """
                SELECT client_id FROM cloud.user_account_mqtt_client_id
                WHERE device_id = \(deviceID) AND revoked_at IS NULL
                """, logger: logger
            ).all(String.self)
            try await connection.query("DELETE FROM cloud.device WHERE id = \(deviceID)", logger: logger)
            try await Self.tellBroker(ended: sessions, clientIDs: clientIDs, on: connection, logger: logger)
            return (sessions, clientIDs)
        }
    }
}
