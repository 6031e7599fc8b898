import Configuration
import Foundation
import SystemPackage

/// Typed access to Parley's configuration: environment variables over an optional file.
struct Settings: Sendable {
    let reader: ConfigReader

    /// Reads the environment and, when given, a file of `KEY=VALUE` lines (environment wins).
    static func load(file: String?) async throws -> Settings {
        let secrets = Set(SettingKeys.all.filter(\.isSecret).map(\.environmentVariable))
        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(secretsSpecifier: .specific(secrets))]
        let path = file ?? ProcessInfo.processInfo.environment["PARLEY_CONFIG_FILE"]
        if let path, !path.isEmpty {
            guard FileManager.default.isReadableFile(atPath: path) else { throw SettingsError.fileNotReadable(path) }
            providers.append(
                try await EnvironmentVariablesProvider(
                    environmentFilePath: FilePath(path), secretsSpecifier: .specific(secrets)))
        }
        return Settings(reader: ConfigReader(providers: providers))
    }

    /// For tests: exactly these variables.
    init(environment: [String: String]) {
        reader = ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: environment))
    }

    private init(reader: ConfigReader) { self.reader = reader }

    /// The configured value, else the key's default (the only place defaults are written); an
    /// empty value counts as unset.
    func string(_ key: SettingKey) -> String? {
        let configured = reader.string(forKey: ConfigKey(key.name), isSecret: key.isSecret)
        guard let value = configured?.isEmpty == false ? configured : key.defaultValue, !value.isEmpty else {
            return nil
        }
        return value
    }

    func int(_ key: SettingKey, in range: ClosedRange<Int> = 0...Int.max) throws -> Int? {
        guard let text = string(key) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw SettingsError.invalid(key, expected: "an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func port(_ key: SettingKey) throws -> Int? { try int(key, in: 0...65535) }

    func seconds(_ key: SettingKey) throws -> Duration? {
        guard let text = string(key) else { return nil }
        guard let value = Double(text), value >= 0, value < 1e9 else {
            throw SettingsError.invalid(key, expected: "a number of seconds")
        }
        return .milliseconds(Int64(value * 1000))
    }

    /// A duration that must be set (by the environment or its default) and above zero.
    func positiveSeconds(_ key: SettingKey) throws -> Duration {
        guard let value = try seconds(key), value > .zero else {
            throw SettingsError.invalid(key, expected: "a positive number of seconds")
        }
        return value
    }

    func bool(_ key: SettingKey) throws -> Bool {
        switch string(key)?.lowercased() {
        case nil, "false", "0", "no", "off": return false
        case "true", "1", "yes", "on": return true
        default: throw SettingsError.invalid(key, expected: "true or false")
        }
    }

    /// A value the key's default guarantees, or one without a default that must be set.
    func required<Value>(_ value: Value?, _ key: SettingKey) throws -> Value {
        guard let value else { throw SettingsError.missing(key) }
        return value
    }
}

/// A configuration value that is missing or malformed; names the environment variable.
enum SettingsError: Error, CustomStringConvertible {
    case invalid(SettingKey, expected: String)
    case missing(SettingKey)
    case fileNotReadable(String)

    var description: String {
        switch self {
        case .invalid(let key, let expected): "\(key.environmentVariable) must be \(expected)"
        case .missing(let key): "\(key.environmentVariable) is required"
        case .fileNotReadable(let path): "configuration file \(path) cannot be read"
        }
    }
}
