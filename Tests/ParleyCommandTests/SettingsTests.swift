import Foundation
import ParleyCore
import Testing

@testable import parley

/// Configuration defaults are written once, in the key table that `parley --help` and the
/// README print; every reader takes them from there.
struct SettingsTests {
    @Test func componentsTakeTheirDefaultsFromTheKeyTable() throws {
        let settings = Settings(environment: [:])
        let postgres = try settings.postgres()
        #expect(postgres.host == SettingKeys.Postgres.host.defaultValue)
        #expect(postgres.user == SettingKeys.Postgres.user.defaultValue)
        #expect(postgres.tls.rawValue == SettingKeys.Postgres.tls.defaultValue)
        #expect(postgres.connectTimeout == .seconds(Int(SettingKeys.Postgres.connectTimeout.defaultValue ?? "") ?? -1))
        #expect(postgres.idleTimeout == .seconds(Int(SettingKeys.Postgres.idleTimeout.defaultValue ?? "") ?? -1))
        #expect(postgres.keepAlive == .seconds(Int(SettingKeys.Postgres.keepAlive.defaultValue ?? "") ?? -1))
        let http = try settings.http()
        #expect(http.internalHost == SettingKeys.HTTP.internalHost.defaultValue)
        #expect(http.idleTimeout == .seconds(Int(SettingKeys.HTTP.idleTimeout.defaultValue ?? "") ?? -1))
        #expect(try settings.logLevel().rawValue == SettingKeys.General.logLevel.defaultValue)
        #expect(try settings.mediaWorkDirectory() == "\(SettingKeys.Files.directory.defaultValue ?? "")/work")
        #expect(
            try settings.ingestConcurrency() == max(1, ProcessInfo.processInfo.activeProcessorCount / 2),
            "half the machine's cores: one transaction in flight per lane")
        #expect(
            try settings.ingestCommitInterval()
                == .microseconds(Int(SettingKeys.Jobs.ingestCommitInterval.defaultValue ?? "") ?? -1))
        #expect(
            try settings.sendBatching().lanes == max(1, ProcessInfo.processInfo.activeProcessorCount / 2),
            "REST sends' lanes as the ingest's")
    }

    /// Parley's MQTT clients ask a window of 1,000, not libmosquitto's 20: EMQX answers with
    /// the lower of it and its `max_inflight` as the window for the client's own publishes.
    @Test func parleysMQTTClientsAskAWideReceiveMaximum() throws {
        #expect(try Settings(environment: [:]).mqtt(role: "worker").receiveMaximum == 1_000)
    }

    /// Signed file links last an hour; `PARLEY_FILES_LINK_LIFETIME` is read only when
    /// `PARLEY_SIGNED_URL_TTL` is not set.
    @Test func signedFileLinksLastAnHourUnlessConfigured() throws {
        let key = ["PARLEY_MQTT_TOKEN_KEY": Data(repeating: 1, count: 32).base64EncodedString()]
        #expect(SettingKeys.Files.signedURLTTL.environmentVariable == "PARLEY_SIGNED_URL_TTL")
        #expect(try Settings(environment: key).fileLinks().lifetime == .seconds(3_600))
        let set = key.merging(["PARLEY_SIGNED_URL_TTL": "600", "PARLEY_FILES_LINK_LIFETIME": "86400"]) { $1 }
        #expect(try Settings(environment: set).fileLinks().lifetime == .seconds(600))
        let former = key.merging(["PARLEY_FILES_LINK_LIFETIME": "900"]) { $1 }
        #expect(try Settings(environment: former).fileLinks().lifetime == .seconds(900))
        let zero = Settings(environment: key.merging(["PARLEY_SIGNED_URL_TTL": "0"]) { $1 })
        #expect(throws: SettingsError.self) { try zero.fileLinks() }
    }

    @Test func anEmptyValueMeansTheDefaultAndASetOneWins() throws {
        let empty = Settings(environment: ["PARLEY_POSTGRES_HOST": "", "PARLEY_REDIS_COMMAND_TIMEOUT": ""])
        #expect(try empty.postgres().host == "127.0.0.1")
        #expect(try empty.redis().commandTimeout == .seconds(10))
        let set = Settings(environment: ["PARLEY_POSTGRES_HOST": "db.internal", "PARLEY_REDIS_COMMAND_TIMEOUT": "2.5"])
        #expect(try set.postgres().host == "db.internal")
        #expect(try set.redis().commandTimeout == .milliseconds(2500))
    }

    @Test func aMalformedValueNamesItsVariable() throws {
        let settings = Settings(environment: ["PARLEY_POSTGRES_TLS": "sometimes"])
        let error = #expect(throws: SettingsError.self) { try settings.postgres() }
        #expect(error?.description.hasPrefix("PARLEY_POSTGRES_TLS must be") == true)
        // No idle time at all would close every connection between requests.
        let noIdle = Settings(environment: ["PARLEY_POSTGRES_IDLE_TIMEOUT": "0"])
        let idle = #expect(throws: SettingsError.self) { try noIdle.postgres() }
        #expect(idle?.description.hasPrefix("PARLEY_POSTGRES_IDLE_TIMEOUT must be a positive number") == true)
        // The ingest's commit interval may be 0 (no wait), but not beyond a second.
        let noWait = Settings(environment: ["PARLEY_INGEST_COMMIT_INTERVAL_MICROSECONDS": "0"])
        #expect(try noWait.ingestCommitInterval() == .zero)
        let tooLong = Settings(environment: ["PARLEY_INGEST_COMMIT_INTERVAL_MICROSECONDS": "2000000"])
        let interval = #expect(throws: SettingsError.self) { try tooLong.ingestCommitInterval() }
        #expect(interval?.description.hasPrefix("PARLEY_INGEST_COMMIT_INTERVAL_MICROSECONDS must be") == true)
    }

    /// A bot's message budget is its own: 50 a second after a burst of 100 unless set.
    @Test func botsHaveAMessageBudgetOfTheirOwn() throws {
        let defaults = try Settings(environment: [:]).abuseLimits()
        #expect(defaults.botMessages == RateBucket(perSecond: 50, burst: 100) && defaults.messages.perSecond == 10)
        let set = try Settings(
            environment: ["PARLEY_LIMIT_BOT_MESSAGES_PER_SECOND": "5.5", "PARLEY_LIMIT_BOT_MESSAGES_BURST": "7"]
        ).abuseLimits()
        #expect(set.botMessages == RateBucket(perSecond: 5.5, burst: 7))
        let zero = Settings(environment: ["PARLEY_LIMIT_BOT_MESSAGES_PER_SECOND": "0"])
        let error = #expect(throws: SettingsError.self) { try zero.abuseLimits() }
        #expect(error?.description.hasPrefix("PARLEY_LIMIT_BOT_MESSAGES_PER_SECOND must be") == true)
    }
}
