import Configuration
import Foundation
import ParleyCore
import ParleyMedia

extension Settings {
    /// Where uploads are kept: a directory, or PostgreSQL's large objects.
    enum BlobStoreChoice: Equatable {
        case filesystem(directory: String)
        case postgres
    }

    /// The configured blob store (``Adapters/blobStore(_:database:)`` builds it).
    func blobStoreChoice() throws -> BlobStoreChoice {
        typealias K = SettingKeys.Files
        switch try required(string(K.store), K.store) {
        case "filesystem": return .filesystem(directory: try required(string(K.directory), K.directory))
        case "postgres": return .postgres
        default: throw SettingsError.invalid(K.store, expected: "filesystem or postgres")
        }
    }

    /// Signed file URLs, keyed from the MQTT token key (one secret for operators to manage).
    func fileLinks() throws -> FileLinks {
        typealias K = SettingKeys.Files
        let keyText = SettingKeys.MQTTClients.tokenKey
        guard let text = string(keyText), let secret = Data(base64Encoded: text) else {
            throw SettingsError.missing(keyText)
        }
        return FileLinks(deriveFrom: Array(secret), baseURL: string(K.publicURL) ?? "", lifetime: try signedURLTTL())
    }

    /// `PARLEY_SIGNED_URL_TTL`, else its deprecated former name `PARLEY_FILES_LINK_LIFETIME`,
    /// else the default.
    func signedURLTTL() throws -> Duration {
        typealias K = SettingKeys.Files
        let configured = reader.string(forKey: ConfigKey(K.signedURLTTL.name)) ?? ""
        return try positiveSeconds(
            configured.isEmpty && string(K.linkLifetime) != nil ? K.linkLifetime : K.signedURLTTL)
    }

    func uploadLimit() throws -> Int64 {
        Int64(try required(int(SettingKeys.Files.uploadLimit, in: 1...(1 << 40)), SettingKeys.Files.uploadLimit))
    }

    func orphanGrace() throws -> Duration {
        try positiveSeconds(SettingKeys.Files.orphanGrace)
    }

    func toolRunner() throws -> ToolRunner {
        typealias K = SettingKeys.Files
        let memory = try required(int(K.mediaMemoryLimit, in: (64 << 20)...(1 << 40)), K.mediaMemoryLimit)
        guard let timeout = try seconds(K.mediaTimeout), timeout > .zero else {
            throw SettingsError.invalid(K.mediaTimeout, expected: "a positive number of seconds")
        }
        return ToolRunner(
            memoryLimit: memory, cpuSeconds: Int(timeout.components.seconds), wallTime: timeout + .seconds(5))
    }

    func mediaWorkDirectory() throws -> String {
        try required(string(SettingKeys.Files.directory), SettingKeys.Files.directory) + "/work"
    }
}
