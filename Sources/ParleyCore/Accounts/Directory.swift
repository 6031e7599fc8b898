import Foundation

/// A named set of users (`cloud.user_group`).
public struct UserGroup: Sendable, Equatable, Codable {
    public let id: Int64
    public let name: String
    public let createdAt: Date

    public init(id: Int64, name: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }
}

/// An application (module) and the roles it defines (`cloud.app`, `cloud.role`).
public struct Application: Sendable, Equatable, Codable {
    public let id: Int64
    public let code: String
    public let name: String
    public let roles: [Role]

    public init(id: Int64, code: String, name: String, roles: [Role]) {
        self.id = id
        self.code = code
        self.name = name
        self.roles = roles
    }
}

public struct Role: Sendable, Equatable, Codable {
    public let id: Int64
    public let code: String
    public let name: String
    /// Higher includes lower within one application (messenger: reader 1, writer 2, admin 3).
    public let rank: Int

    public init(id: Int64, code: String, name: String, rank: Int) {
        self.id = id
        self.code = code
        self.name = name
        self.rank = rank
    }
}

/// Groups, applications and role grants: what system administrators manage.
public protocol DirectoryRepository: Sendable {
    /// Throws `conflict` when a group has that name (case-insensitive).
    func createGroup(name: String) async throws -> UserGroup
    /// Throws `not-found` when the group or the user does not exist. Idempotent.
    func addMember(groupID: Int64, userID: Int64) async throws
    /// Returns false when the user was not a member.
    func removeMember(groupID: Int64, userID: Int64) async throws -> Bool
    func applications() async throws -> [Application]
    /// Creates the role, and the application when it is new. Throws `conflict` on a taken code.
    func createRole(appCode: String, code: String, name: String, rank: Int) async throws -> Role
    /// Throws `not-found` when the user or the role does not exist. Idempotent.
    func grantRole(userID: Int64, roleID: Int64) async throws
    func revokeRole(userID: Int64, roleID: Int64) async throws -> Bool
}

/// Codes of applications and roles: lowercase letters, digits, `-` and `_`.
public enum DirectoryCode {
    public static func validated(_ code: String, field: String) throws -> String {
        guard code.wholeMatch(of: /[a-z0-9][a-z0-9_-]{0,63}/) != nil else {
            throw ParleyError.invalidRequest(
                "\(field) must be 1 to 64 lowercase letters, digits, '-' or '_'", field: field)
        }
        return code
    }
}
