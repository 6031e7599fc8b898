import Foundation
import ParleyCore
import ParleyRedis

extension Settings {
    func jobQueue() throws -> RedisJobQueue.Configuration {
        typealias K = SettingKeys.Jobs
        return RedisJobQueue.Configuration(
            maxAttempts: try required(int(K.maxAttempts, in: 1...100), K.maxAttempts),
            visibilityTimeout: try positiveSeconds(K.visibilityTimeout))
    }

    func outboxStallLimit() throws -> Duration {
        try positiveSeconds(SettingKeys.Jobs.outboxStall)
    }

    func fanoutChunkSize() throws -> Int {
        try required(int(SettingKeys.Jobs.fanoutChunkSize, in: 1...100_000), SettingKeys.Jobs.fanoutChunkSize)
    }

    /// Nil when 0: every message's copies go at once.
    func notificationWindow() throws -> Duration? {
        let key = SettingKeys.Jobs.notificationWindow
        let milliseconds = try required(int(key, in: 0...3_600_000), key)
        return milliseconds == 0 ? nil : .milliseconds(milliseconds)
    }

    func fanoutConsumers() throws -> Int {
        try required(int(SettingKeys.Jobs.fanoutConsumers, in: 1...256), SettingKeys.Jobs.fanoutConsumers)
    }
}

extension Settings {
    func ingestConcurrency() throws -> Int {
        try required(int(SettingKeys.Jobs.ingestConcurrency, in: 1...1024), SettingKeys.Jobs.ingestConcurrency)
    }

    func ingestCommitInterval() throws -> Duration {
        typealias K = SettingKeys.Jobs
        return .microseconds(try required(int(K.ingestCommitInterval, in: 0...1_000_000), K.ingestCommitInterval))
    }

    func ingestPayloadLimit() throws -> Int {
        try required(
            int(SettingKeys.Jobs.ingestPayloadLimit, in: 256...16_777_216), SettingKeys.Jobs.ingestPayloadLimit)
    }

    func ingestSender() throws -> ChatInSender {
        let key = SettingKeys.Jobs.ingestSender
        guard let sender = ChatInSender(rawValue: try required(string(key), key)) else {
            throw SettingsError.invalid(key, expected: "plugin or topic")
        }
        // EMQX stamps nothing: a `parley-user` there is whatever the client wrote.
        if sender == .plugin, string(SettingKeys.MQTT.control) == "emqx" {
            throw SettingsError.invalid(
                key, expected: "topic with PARLEY_BROKER_CONTROL=emqx (EMQX vouches for no sender)")
        }
        return sender
    }

    /// The key the ingest verifies the plugin's sender stamps with: required with
    /// `PARLEY_INGEST_SENDER=plugin`, nil with `topic` (which reads no stamp).
    func senderStampKey() throws -> SenderStampKey? {
        guard try ingestSender() == .plugin else { return nil }
        let key = SettingKeys.MQTTClients.stampKey
        guard let text = string(key) else { throw SettingsError.missing(key) }
        guard let bytes = Data(base64Encoded: text), let stampKey = try? SenderStampKey(bytes: Array(bytes)) else {
            throw SettingsError.invalid(key, expected: "base64 of at least 32 bytes (openssl rand -base64 32)")
        }
        return stampKey
    }
}

extension Settings {
    /// How concurrent REST sends share commits (group commit).
    func sendBatching() throws -> SendBatching {
        typealias K = SettingKeys.Jobs
        return SendBatching(
            lanes: try required(int(K.batchLanes, in: 1...1024), K.batchLanes),
            maxBatch: try messageBatchLimit(),
            window: .microseconds(try required(int(K.batchWindow, in: 0...100_000), K.batchWindow)),
            interval: .microseconds(try required(int(K.commitInterval, in: 0...1_000_000), K.commitInterval)))
    }

    /// Most messages one transaction stores (an ingest lane's batch too).
    func messageBatchLimit() throws -> Int {
        try required(int(SettingKeys.Jobs.batchLimit, in: 1...10_000), SettingKeys.Jobs.batchLimit)
    }
}
