import Foundation

/// What signs in with a trusted issuer's token: the verifier of the issuers' tokens and the
/// provisioning rule their users go through.
public struct TokenExchange: Sendable {
    public let verifier: IssuerTokenVerifier
    public let provisioning: IdentityProvisioning

    public init(verifier: IssuerTokenVerifier, provisioning: IdentityProvisioning) {
        self.verifier = verifier
        self.provisioning = provisioning
    }
}

/// A subject token refused: the client hears only 401 `invalid-token`; ``reason`` is for the
/// log (and never holds the token).
public struct TokenRefused: Error, CustomStringConvertible, Equatable {
    public let reason: String

    public init(reason: String) { self.reason = reason }

    public var description: String { "token refused: \(reason)" }
}

extension AccountService {
    /// Signs in with a trusted issuer's token (`POST /v1/auth/token`), ending as a password
    /// login ends. Any refusal of the token throws ``TokenRefused`` before anything is
    /// provisioned; keys that cannot be read, ``IssuerKeysUnavailable``.
    public func exchange(token: String, device: DeviceRegistration, clientAddress: String?) async throws -> SignedIn {
        guard let tokenExchange else { throw ParleyError.notFound("No issuer is trusted here.") }
        try await signInAttempt(clientAddress: clientAddress)
        let identity: IssuedIdentity
        do {
            identity = try await tokenExchange.verifier.identity(of: token)
        } catch let refusal as IssuerTokenRefusal {
            throw TokenRefused(reason: String(describing: refusal))
        }
        let user: User
        do {
            user = try await tokenExchange.provisioning.upsert(
                ExternalIdentity(issuer: identity.issuer, subject: identity.subject),
                profile: ExternalProfile(claimsOf: identity)
            ).user
        } catch let error as ParleyError where error.code == .invalidRequest {
            // A claim the account cannot take (no e-mail for a new user, one that is no address).
            throw TokenRefused(reason: "claims: \(error.detail)")
        }
        return try await openSession(for: user, device: device)
    }
}

extension AccountService {
    /// Whether a trusted issuer's token says the caller is `userID` (deleting an account that
    /// has no password asks for one): on the login attempts' budget, as a password is.
    public func verifyIssuerToken(_ token: String, userID: Int64, clientAddress: String?) async throws -> Bool {
        guard let tokenExchange else { return false }
        try await signInAttempt(clientAddress: clientAddress)
        let identity: IssuedIdentity
        do {
            identity = try await tokenExchange.verifier.identity(of: token)
        } catch is IssuerTokenRefusal {
            return false
        }
        let user = try await tokenExchange.provisioning.user(
            of: ExternalIdentity(issuer: identity.issuer, subject: identity.subject))
        return user?.id == userID
    }
}

extension ExternalProfile {
    /// The profile a token's claims give: names trimmed and cut to what an account holds (an
    /// issuer's long name does not lock its user out), empty values as unsaid.
    init(claimsOf identity: IssuedIdentity) {
        func text(_ value: String?, limit: Int) -> String? {
            guard let value else { return nil }
            let scalars = value.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars.filter { $0 != "\u{0}" }
            guard !scalars.isEmpty else { return nil }
            return String(String.UnicodeScalarView(scalars.prefix(limit)))
        }
        self.init(
            email: identity.email.flatMap { text($0, limit: .max) },
            firstName: text(identity.firstName, limit: 100), lastName: text(identity.lastName, limit: 100),
            emailVerified: identity.emailVerified)
    }
}
