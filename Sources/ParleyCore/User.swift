import Foundation

/// A person with an account (`cloud.user_account`).
public struct User: Sendable, Equatable, Codable {
    public let id: Int64
    public var email: String
    public var firstName: String
    public var lastName: String
    /// A system administrator manages users, groups and application roles.
    public var isAdmin: Bool
    public let createdAt: Date
    /// The user's picture (an image they uploaded), with signed URLs; nil without one.
    public var avatar: FileObject?

    public init(
        id: Int64, email: String, firstName: String, lastName: String, isAdmin: Bool, createdAt: Date,
        avatar: FileObject? = nil
    ) {
        self.id = id
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
        self.isAdmin = isAdmin
        self.createdAt = createdAt
        self.avatar = avatar
    }
}

/// What is needed to create an account; the password is already hashed.
public struct NewUser: Sendable, Equatable {
    public var email: String
    public var firstName: String
    public var lastName: String
    public var passwordHash: String
    public var isAdmin: Bool

    public init(email: String, firstName: String, lastName: String, passwordHash: String, isAdmin: Bool = false) {
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
        self.passwordHash = passwordHash
        self.isAdmin = isAdmin
    }

    /// Checks the fields a client or operator typed, naming the first field that is wrong.
    public func validated() throws -> NewUser {
        let email = try Self.validatedEmail(email)
        for (field, value) in [("firstName", firstName), ("lastName", lastName)] {
            _ = try TextRule.validated(value.trimmingCharacters(in: .whitespaces), field: field, length: 1...100)
        }
        var copy = self
        copy.email = email
        return copy
    }

    /// The password hash of an account no password opens (one an issuer's token made, or an
    /// erased one): logins treat its e-mail as unknown.
    public static let noPassword = "!"

    /// An e-mail address as accounts store it (trimmed), or `invalid-request` naming `email`.
    public static func validatedEmail(_ email: String) throws -> String {
        let email = email.trimmingCharacters(in: .whitespaces)
        guard email.unicodeScalars.count <= 320, !email.unicodeScalars.contains("\u{0}"),
            email.wholeMatch(of: /[^@\s]+@[^@\s]+\.[^@\s]+/) != nil
        else {
            throw ParleyError.invalidRequest("email must be an e-mail address", field: "email")
        }
        return email
    }
}

/// Where accounts are stored.
public protocol UserRepository: Sendable {
    /// Creates the account; throws `email-taken` when the e-mail is registered already.
    func create(_ user: NewUser) async throws -> User
    func find(id: Int64) async throws -> User?
    /// The account and its password hash for a login (e-mail compared case-insensitively).
    func credentials(email: String) async throws -> (user: User, passwordHash: String)?
    func passwordHash(userID: Int64) async throws -> String?
    /// Changes what is given; returns the updated account.
    func update(id: Int64, firstName: String?, lastName: String?, passwordHash: String?) async throws -> User?
    /// Deactivates the account (it cannot sign in) or activates it again; false when there is
    /// no such account.
    func setDeactivated(id: Int64, deactivated: Bool) async throws -> Bool
    func isDeactivated(id: Int64) async throws -> Bool
    /// Users whose first or last name starts with `prefix`, or whose e-mail starts with it
    /// (`emailPrefix`) or is it, by id after `cursor`; with `roomMatesOf`, only that user and
    /// those who share a room with them.
    func search(prefix: String?, emailPrefix: Bool, roomMatesOf viewer: Int64?, after cursor: Int64?, limit: Int)
        async throws -> [User]
}

/// Whom a signed-in user finds in the user directory (`GET /v1/users`, `PARLEY_DIRECTORY`).
public enum DirectoryVisibility: String, Sendable, CaseIterable {
    /// Anyone, as the source design wants (anyone may be found and added); an exact e-mail
    /// then tells whether it is registered.
    case everyone
    /// Only people who share a room with the searcher: a stranger's e-mail is not confirmed.
    case roomMates = "room-mates"
}
