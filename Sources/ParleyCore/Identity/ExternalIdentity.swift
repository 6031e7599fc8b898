import Foundation

/// A user of a trusted issuer, as the issuer names them: its `iss` and the user's `sub`
/// there (the server API's `externalId`).
public struct ExternalIdentity: Sendable, Hashable {
    public let issuer: String
    public let subject: String

    public init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }
}

/// What an issuer's token, or the app's backend, says about its user; nil is "not said", and
/// keeps what is stored.
public struct ExternalProfile: Sendable, Equatable {
    public var email: String?
    public var firstName: String?
    public var lastName: String?
    /// The issuer vouches for the e-mail (`email_verified: true`): one of the two conditions
    /// to link an existing account with that e-mail (see ``IdentityProvisioning``).
    public var emailVerified: Bool

    public init(email: String?, firstName: String?, lastName: String?, emailVerified: Bool = false) {
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
        self.emailVerified = emailVerified
    }

    /// Checked as registration checks them, naming the first field that is wrong.
    func validated() throws -> ExternalProfile {
        var copy = self
        copy.email = try email.map(NewUser.validatedEmail)
        copy.firstName = try firstName.map {
            try TextRule.validated($0.trimmingCharacters(in: .whitespaces), field: "firstName", length: 1...100)
        }
        copy.lastName = try lastName.map {
            try TextRule.validated($0.trimmingCharacters(in: .whitespaces), field: "lastName", length: 1...100)
        }
        return copy
    }
}

/// Which Parley user each issuer's user is (`cloud.user_identity`).
public protocol IdentityRepository: Sendable {
    /// The user the identity is linked to (not a deleted one), or nil.
    func user(of identity: ExternalIdentity) async throws -> User?
    /// The user ids of many subjects of one issuer, in one query; unknown ones are absent.
    func userIDs(issuer: String, subjects: [String]) async throws -> [String: Int64]
    /// Creates the account and links the identity to it, in one transaction: `email-taken`
    /// when the e-mail is registered, ``ParleyError/identityLinked`` when the identity was
    /// linked meanwhile.
    func create(_ user: NewUser, for identity: ExternalIdentity) async throws -> User
    /// Links the identity to an existing account: false when that account holds another
    /// subject of the issuer, ``ParleyError/identityLinked`` when the identity was linked
    /// meanwhile.
    func link(_ identity: ExternalIdentity, to userID: Int64) async throws -> Bool
    /// Sets what is given; `email-taken` when another account has the e-mail; nil when there
    /// is no such account.
    func update(userID: Int64, email: String?, firstName: String?, lastName: String?) async throws -> User?
}

extension ParleyError {
    /// Two first sign-ins of one identity at once: the second finds it linked.
    public static let identityLinked = ParleyError(.conflict, "This identity is linked to an account already.")
}
