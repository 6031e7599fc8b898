/// One documented configuration key: its name, environment variable, default and meaning.
///
/// Every key Parley reads is declared once as a `SettingKey`; `parley --help` and the
/// README's table are generated from the same declarations.
struct SettingKey: Sendable {
    /// Dotted name as read through swift-configuration, e.g. `parley.postgres.host`.
    let name: String
    /// The default as text; `nil` when the key is optional or required.
    let defaultValue: String?
    let help: String
    /// Secrets are redacted from logs and must come from the environment or a protected file.
    let isSecret: Bool

    init(_ name: String, default defaultValue: String? = nil, secret: Bool = false, _ help: String) {
        self.name = "parley." + name
        self.defaultValue = defaultValue
        self.help = help
        self.isSecret = secret
    }

    /// The environment variable, as swift-configuration's environment provider spells it:
    /// `parley.postgres.maxConnections` → `PARLEY_POSTGRES_MAX_CONNECTIONS`.
    var environmentVariable: String {
        var result = ""
        var previousWasLowercase = false
        for character in name {
            if character == "." || character == "-" {
                result.append("_")
                previousWasLowercase = false
            } else if character.isUppercase && previousWasLowercase {
                result.append("_")
                result.append(contentsOf: character.uppercased())
                previousWasLowercase = false
            } else {
                result.append(contentsOf: character.uppercased())
                previousWasLowercase = character.isLowercase || character.isNumber
            }
        }
        return result
    }
}
