import Crypto
import Foundation
import ParleyCore
import ParleyPush

extension Settings {
    func pushContent() throws -> PushComposer.Content {
        let key = SettingKeys.Push.content
        guard let content = PushComposer.Content(rawValue: try required(string(key), key)) else {
            throw SettingsError.invalid(key, expected: "preview or ids")
        }
        return content
    }

    func pushConcurrency() throws -> Int {
        try required(int(SettingKeys.Push.concurrency, in: 1...1000), SettingKeys.Push.concurrency)
    }

    /// Longer than the general jobs' timeout by default: a push may take four 10 s requests
    /// (FCM's token refresh and a retry), and another worker must not send it again meanwhile.
    func pushVisibilityTimeout() throws -> Duration { try positiveSeconds(SettingKeys.Push.visibilityTimeout) }

    /// The providers configured here; each is off until its credentials are set
    /// (``Adapters/pushSenders(_:client:)`` builds their senders).
    struct PushProviders {
        var apns: APNsConfiguration?
        var fcm: FCMConfiguration?
        var webhook: WebhookConfiguration?
    }

    func pushProviders() throws -> PushProviders {
        typealias K = SettingKeys.Push
        var providers = PushProviders()
        if let keyFile = string(K.apnsKeyFile) {
            guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8),
                let key = try? P256.Signing.PrivateKey(pemRepresentation: pem)
            else { throw SettingsError.invalid(K.apnsKeyFile, expected: "a readable .p8 (PKCS #8 PEM) EC key") }
            guard let keyID = string(K.apnsKeyID) else { throw SettingsError.missing(K.apnsKeyID) }
            guard let teamID = string(K.apnsTeamID) else { throw SettingsError.missing(K.apnsTeamID) }
            guard let topic = string(K.apnsTopic) else { throw SettingsError.missing(K.apnsTopic) }
            guard
                let environment = APNsConfiguration.Environment(
                    rawValue: try required(string(K.apnsEnvironment), K.apnsEnvironment))
            else { throw SettingsError.invalid(K.apnsEnvironment, expected: "production or sandbox") }
            providers.apns = APNsConfiguration(
                key: key, keyID: keyID, teamID: teamID, topic: topic, baseURL: string(K.apnsURL) ?? environment.url)
        }
        if let accountFile = string(K.fcmServiceAccountFile) {
            guard let document = FileManager.default.contents(atPath: accountFile),
                let configuration = try? FCMConfiguration(
                    serviceAccountJSON: document, baseURL: try required(string(K.fcmURL), K.fcmURL))
            else {
                throw SettingsError.invalid(
                    K.fcmServiceAccountFile, expected: "a readable service-account JSON file with an RSA private key")
            }
            providers.fcm = configuration
        }
        if let url = string(K.webhookURL) {
            providers.webhook = WebhookConfiguration(url: url, secret: string(K.webhookSecret))
        }
        return providers
    }
}
