import Foundation
import ParleyAPI
import ParleyCore

/// The account and client-facing MQTT settings.
extension Settings {
    func accountPolicy() throws -> AccountPolicy {
        typealias K = SettingKeys.Accounts
        return AccountPolicy(
            accessTokenLifetime: try positiveSeconds(K.accessTokenLifetime),
            refreshTokenLifetime: try positiveSeconds(K.refreshTokenLifetime),
            mqttTokenLifetime: try positiveSeconds(SettingKeys.MQTTClients.tokenLifetime),
            registrationOpen: try bool(K.registrationOpen),
            loginLimitPerEmail: try required(int(K.loginLimitPerEmail, in: 1...1_000_000), K.loginLimitPerEmail),
            loginLimitPerAccount: try required(
                int(K.loginLimitPerAccount, in: 1...1_000_000), K.loginLimitPerAccount),
            loginLimitPerAddress: try required(
                int(K.loginLimitPerAddress, in: 1...1_000_000), K.loginLimitPerAddress),
            registerLimitPerAddress: try required(
                int(K.registerLimitPerAddress, in: 1...1_000_000), K.registerLimitPerAddress),
            rateLimitWindow: try positiveSeconds(K.rateLimitWindow),
            directory: try directoryVisibility(),
            passwordSignIn: try bool(SettingKeys.Auth.password))
    }

    func directoryVisibility() throws -> DirectoryVisibility {
        let key = SettingKeys.Accounts.directory
        guard let visibility = DirectoryVisibility(rawValue: try required(string(key), key)) else {
            throw SettingsError.invalid(key, expected: "everyone or room-mates")
        }
        return visibility
    }

    func sessionCacheLifetime() throws -> Duration {
        try required(seconds(SettingKeys.Accounts.sessionCacheLifetime), SettingKeys.Accounts.sessionCacheLifetime)
    }

    func mqttTokenKey() throws -> MQTTTokenKey {
        let key = SettingKeys.MQTTClients.tokenKey
        guard let text = string(key) else { throw SettingsError.missing(key) }
        guard let bytes = Data(base64Encoded: text), let tokenKey = try? MQTTTokenKey(bytes: Array(bytes)) else {
            throw SettingsError.invalid(key, expected: "base64 of at least 32 bytes (openssl rand -base64 32)")
        }
        return tokenKey
    }

    func mqttEndpoint() throws -> MQTTEndpoint {
        typealias K = SettingKeys.MQTTClients
        return MQTTEndpoint(
            host: try string(K.publicHost) ?? required(string(SettingKeys.MQTT.host), SettingKeys.MQTT.host),
            port: try required(port(K.publicPort), K.publicPort),
            tls: try bool(K.publicTLS),
            websocketPort: try port(K.publicWebsocketPort))
    }

    /// The server's own MQTT identity, a superuser for the broker.
    func serverIdentity() throws -> BrokerAuthority.ServerIdentity? {
        guard let username = string(SettingKeys.MQTT.username), let password = string(SettingKeys.MQTT.password) else {
            return nil
        }
        return BrokerAuthority.ServerIdentity(username: username, password: password)
    }
}
