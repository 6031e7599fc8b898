/// The directory's rules (accounts an operator makes, groups, applications' roles) for every
/// front-end: `/v1/admin/*` and the `parley user|group|role` commands call these, so a name,
/// code, rank or password is checked the same way whichever way it comes in.
public struct DirectoryService: Sendable {
    let users: any UserRepository
    let directory: any DirectoryRepository
    let hasher: any PasswordHasher

    /// Role ranks: a higher rank includes the lower ones.
    public static let ranks = 0...1000

    public init(users: any UserRepository, directory: any DirectoryRepository, hasher: any PasswordHasher) {
        self.users = users
        self.directory = directory
        self.hasher = hasher
    }

    /// An account with the password hashed; `email-taken` when the address is in use.
    public func createUser(_ newUser: NewUser, password: String) async throws -> User {
        var user = try newUser.validated()
        user.passwordHash = try await hasher.hash(PasswordRule.validated(password))
        return try await users.create(user)
    }

    /// `conflict` when a group has that name (case-insensitive).
    public func createGroup(name: String) async throws -> UserGroup {
        try await directory.createGroup(name: Self.displayName(name))
    }

    /// Idempotent; `not-found` when the group or the user does not exist.
    public func addMember(groupID: Int64, userID: Int64) async throws {
        try await directory.addMember(groupID: groupID, userID: userID)
    }

    /// `not-found` when the user is not a member.
    public func removeMember(groupID: Int64, userID: Int64) async throws {
        guard try await directory.removeMember(groupID: groupID, userID: userID) else {
            throw ParleyError.notFound("The user is not a member of the group.")
        }
    }

    public func applications() async throws -> [Application] { try await directory.applications() }

    /// Creates the role, and the application when it is new; `conflict` on a taken code.
    public func createRole(appCode: String, code: String, name: String, rank: Int) async throws -> Role {
        let appCode = try DirectoryCode.validated(appCode, field: "app")
        let code = try DirectoryCode.validated(code, field: "code")
        guard Self.ranks.contains(rank) else {
            throw ParleyError.invalidRequest(
                "rank must be \(Self.ranks.lowerBound) to \(Self.ranks.upperBound)", field: "rank")
        }
        return try await directory.createRole(appCode: appCode, code: code, name: Self.displayName(name), rank: rank)
    }

    /// Idempotent; `not-found` when the user or the role does not exist.
    public func grantRole(userID: Int64, roleID: Int64) async throws {
        try await directory.grantRole(userID: userID, roleID: roleID)
    }

    /// `not-found` when the user does not hold the role.
    public func revokeRole(userID: Int64, roleID: Int64) async throws {
        guard try await directory.revokeRole(userID: userID, roleID: roleID) else {
            throw ParleyError.notFound("The user does not hold this role.")
        }
    }

    /// Group and role names: trimmed, 1 to 200 characters.
    static func displayName(_ name: String) throws -> String {
        try TextRule.validated(name.trimmingCharacters(in: .whitespaces), field: "name", length: 1...200)
    }
}
