import Foundation

/// An identity provider whose tokens Parley exchanges for its own sessions: one entry of
/// `PARLEY_AUTH_ISSUERS_FILE`, a JSON array of `{"issuer", "audience", "jwksUrl"}` or
/// `{…, "jwksFile"}`, `"algorithms"` and optional `"claims"`.
public struct TrustedIssuer: Sendable, Equatable {
    /// The signature algorithms an issuer may use: asymmetric only, so that no shared secret
    /// can be guessed, and `none` never.
    public enum Algorithm: String, Sendable, CaseIterable, Codable {
        case rs256 = "RS256"
        case es256 = "ES256"
        case edDSA = "EdDSA"
    }

    /// Where the issuer's signing keys (a JWKS document) are read from.
    public enum KeySource: Sendable, Equatable {
        /// Fetched over HTTPS, kept as long as its `Cache-Control` says.
        case url(URL)
        /// A file on disk, read again on a key it does not hold yet.
        case file(String)
    }

    /// The names of the claims a user's e-mail and names are read from.
    public struct ClaimNames: Sendable, Equatable, Codable {
        public var email = "email"
        public var firstName = "given_name"
        public var lastName = "family_name"

        public init(email: String = "email", firstName: String = "given_name", lastName: String = "family_name") {
            self.email = email
            self.firstName = firstName
            self.lastName = lastName
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            email = try container.decodeIfPresent(String.self, forKey: .email) ?? "email"
            firstName = try container.decodeIfPresent(String.self, forKey: .firstName) ?? "given_name"
            lastName = try container.decodeIfPresent(String.self, forKey: .lastName) ?? "family_name"
        }
    }

    /// The `iss` its tokens carry.
    public let issuer: String
    /// What its tokens' `aud` must name: this deployment.
    public let audience: String
    public let keys: KeySource
    public let algorithms: Set<Algorithm>
    public let claims: ClaimNames

    public init(
        issuer: String, audience: String, keys: KeySource, algorithms: Set<Algorithm>, claims: ClaimNames = ClaimNames()
    ) {
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self.algorithms = algorithms
        self.claims = claims
    }
}

extension TrustedIssuer: Decodable {
    private enum CodingKeys: String, CodingKey {
        case issuer, audience, jwksUrl, jwksFile, algorithms, claims
    }

    /// One key source exactly, an `https` URL, at least one algorithm of ``Algorithm``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func refuse(_ key: CodingKeys, _ reason: String) -> DecodingError {
            .dataCorruptedError(forKey: key, in: container, debugDescription: reason)
        }
        issuer = try container.decode(String.self, forKey: .issuer)
        audience = try container.decode(String.self, forKey: .audience)
        guard !issuer.isEmpty else { throw refuse(.issuer, "an issuer is not empty") }
        guard !audience.isEmpty else { throw refuse(.audience, "an audience is not empty") }
        switch (
            try container.decodeIfPresent(String.self, forKey: .jwksUrl),
            try container.decodeIfPresent(String.self, forKey: .jwksFile)
        ) {
        case (let url?, nil):
            guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "https", parsed.host != nil else {
                throw refuse(.jwksUrl, "jwksUrl is an https URL")
            }
            keys = .url(parsed)
        case (nil, let file?):
            keys = .file(file)
        default:
            throw refuse(.jwksUrl, "give jwksUrl or jwksFile, one of them")
        }
        algorithms = Set(try container.decode([Algorithm].self, forKey: .algorithms))
        guard !algorithms.isEmpty else { throw refuse(.algorithms, "name at least one algorithm") }
        claims = try container.decodeIfPresent(ClaimNames.self, forKey: .claims) ?? ClaimNames()
    }
}
