import Foundation
import ParleyCore

/// The trusted issuers and the sign-in settings around them.
extension Settings {
    /// The entries of `PARLEY_AUTH_ISSUERS_FILE`, each checked as it is decoded; none when
    /// unset. A file that cannot be read or holds a wrong entry stops the start, naming it.
    func trustedIssuers() throws -> [TrustedIssuer] {
        let key = SettingKeys.Auth.issuersFile
        guard let path = string(key) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError.invalid(key, expected: "a readable file (\(path) cannot be read)")
        }
        let issuers: [TrustedIssuer]
        do {
            issuers = try JSONDecoder().decode([TrustedIssuer].self, from: data)
        } catch let error as DecodingError {
            throw SettingsError.invalid(key, expected: "a JSON array of issuers: \(Self.explain(error))")
        } catch {
            throw SettingsError.invalid(key, expected: "a JSON array of issuers (\(path) is not JSON)")
        }
        var seen: Set<String> = []
        for issuer in issuers where !seen.insert(issuer.issuer).inserted {
            throw SettingsError.invalid(key, expected: "a list naming each issuer once (\(issuer.issuer) twice)")
        }
        return issuers
    }

    func linkVerifiedEmail() throws -> Bool { try bool(SettingKeys.Auth.linkVerifiedEmail) }

    /// Extra trust roots for the issuers' `jwksUrl`.
    var issuersCAFile: String? { string(SettingKeys.Auth.caFile) }

    /// Where in the file and what is wrong, as an operator fixes it: `[1].jwksUrl: ...`.
    private static func explain(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let path = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "the document" : path
        }
        switch error {
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context.codingPath)) is of the wrong type"
        @unknown default:
            return "\(error)"
        }
    }
}
