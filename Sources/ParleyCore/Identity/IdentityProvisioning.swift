import Foundation

/// The one rule that makes an issuer's user a Parley user, for the token exchange and the
/// server API (`PUT /v1/server/users/{externalId}`) alike.
///
/// An identity seen before is its user, refreshed with what the profile says (what it does
/// not say stays). One seen first is provisioned: it needs an e-mail; names default to the
/// e-mail's local part. An account that already has the e-mail is linked only when the
/// profile's e-mail is verified and ``linkVerifiedEmail`` is on; otherwise `email-taken`, and
/// nothing is created. See <doc:TokenExchange>.
public struct IdentityProvisioning: Sendable {
    let identities: any IdentityRepository
    let users: any UserRepository
    /// `PARLEY_AUTH_LINK_VERIFIED_EMAIL`.
    public let linkVerifiedEmail: Bool

    public init(identities: any IdentityRepository, users: any UserRepository, linkVerifiedEmail: Bool) {
        self.identities = identities
        self.users = users
        self.linkVerifiedEmail = linkVerifiedEmail
    }

    /// The user, and whether this call created the account.
    public struct Outcome: Sendable, Equatable {
        public let user: User
        public let created: Bool
    }

    /// The user the identity is (not a deleted one), or nil: the server API's `externalId`.
    public func user(of identity: ExternalIdentity) async throws -> User? {
        try await identities.user(of: identity)
    }

    /// The user ids of the issuer's `subjects`, in their order: `not-found` naming `field` when
    /// one is not a user (the server API's lists of `externalId`s).
    public func userIDs(issuer: String, subjects: [String], field: String) async throws -> [Int64] {
        for subject in subjects { _ = try TextRule.validated(subject, field: field, length: 1...255) }
        let found = try await identities.userIDs(issuer: issuer, subjects: subjects)
        return try subjects.map { subject in
            guard let id = found[subject] else {
                throw ParleyError(.notFound, "No user has the externalId \(subject.debugDescription).", field: field)
            }
            return id
        }
    }

    /// Creates or updates the user of `identity` with `profile`: `invalid-request` naming the
    /// field for a profile that is wrong (or no e-mail for a new user), `email-taken` for an
    /// e-mail another account has and may not be linked.
    public func upsert(_ identity: ExternalIdentity, profile: ExternalProfile) async throws -> Outcome {
        // As the table holds it: the server API's `externalId` is a subject too.
        _ = try TextRule.validated(identity.subject, field: "externalId", length: 1...255)
        let profile = try profile.validated()
        if let existing = try await identities.user(of: identity) {
            return Outcome(user: try await refreshed(existing, with: profile), created: false)
        }
        do {
            return try await provision(identity, profile)
        } catch let error as ParleyError where error.code == .emailTaken || error == .identityLinked {
            // A first sign-in of the same identity may have run at the same time and won.
            guard let existing = try await identities.user(of: identity) else { throw error }
            return Outcome(user: try await refreshed(existing, with: profile), created: false)
        }
    }

    private func provision(_ identity: ExternalIdentity, _ profile: ExternalProfile) async throws -> Outcome {
        guard let email = profile.email else {
            throw ParleyError.invalidRequest("email is required to create a user", field: "email")
        }
        if let existing = try await users.credentials(email: email)?.user {
            guard linkVerifiedEmail, profile.emailVerified, try await identities.link(identity, to: existing.id) else {
                throw ParleyError.conflict(.emailTaken, "An account with this e-mail exists.")
            }
            return Outcome(user: try await refreshed(existing, with: profile), created: false)
        }
        let localPart = String(String.UnicodeScalarView(email.unicodeScalars.prefix { $0 != "@" }.prefix(100)))
        // No password opens it: the issuer's token does.
        let user = NewUser(
            email: email, firstName: profile.firstName ?? localPart, lastName: profile.lastName ?? localPart,
            passwordHash: NewUser.noPassword)
        return Outcome(user: try await identities.create(user, for: identity), created: true)
    }

    /// `user` with what `profile` says that differs from what is stored.
    private func refreshed(_ user: User, with profile: ExternalProfile) async throws -> User {
        let email = profile.email == user.email ? nil : profile.email
        let firstName = profile.firstName == user.firstName ? nil : profile.firstName
        let lastName = profile.lastName == user.lastName ? nil : profile.lastName
        guard email != nil || firstName != nil || lastName != nil else { return user }
        guard
            let updated = try await identities.update(
                userID: user.id, email: email, firstName: firstName, lastName: lastName)
        else { throw ParleyError.notFound("No such user.") }
        return updated
    }
}
