import Foundation
import ParleyCore
import Testing

/// The directory's rules, shared by `/v1/admin/*` and the `parley user|group|role` commands,
/// over in-memory fakes of its ports: milliseconds, no PostgreSQL.
struct DirectoryServiceTests {
    let users = InMemoryUsers()
    let directory = InMemoryDirectory()
    var service: DirectoryService { DirectoryService(users: users, directory: directory, hasher: ReversingHasher()) }

    @Test func anAccountIsValidatedAndItsPasswordHashed() async throws {
        let user = try await service.createUser(
            NewUser(email: " Ops@Example.com ", firstName: "Op", lastName: "Erator", passwordHash: "", isAdmin: true),
            password: "correct horse")
        #expect(user.email == "Ops@Example.com", "trimmed; compared case-insensitively where stored")
        #expect(user.isAdmin)
        #expect(await users.hashes[user.id] == "esroh tcerroc")

        for (password, why) in [("short", "under 8 characters"), (String(repeating: "é", count: 37), "over 72 bytes")] {
            let error = await #expect(throws: ParleyError.self, "\(why)") {
                try await service.createUser(
                    NewUser(email: "x@example.com", firstName: "X", lastName: "Y", passwordHash: ""), password: password
                )
            }
            #expect(error?.field == "password")
        }
        await #expect(throws: ParleyError.self) {
            try await service.createUser(
                NewUser(email: "not an address", firstName: "X", lastName: "Y", passwordHash: ""),
                password: "long enough")
        }
        #expect(await users.hashes.count == 1, "nothing refused was stored")
    }

    @Test func groupAndRoleNamesAreTrimmedAndBounded() async throws {
        #expect(try await service.createGroup(name: "  Night shift ").name == "Night shift")
        for name in ["", "   ", String(repeating: "n", count: 201)] {
            let error = await #expect(throws: ParleyError.self) { try await service.createGroup(name: name) }
            #expect(error?.field == "name")
        }
        let role = try await service.createRole(appCode: "assembly", code: "foreman", name: " Foreman ", rank: 1000)
        #expect(role.name == "Foreman")
        #expect(role.rank == 1000)
    }

    @Test func codesAndRanksAreCheckedBeforeAnythingIsStored() async throws {
        let cases: [(app: String, code: String, rank: Int, field: String)] = [
            ("Assembly", "foreman", 1, "app"), ("assembly", "Fore Man", 1, "code"), ("assembly", "-x", 1, "code"),
            ("assembly", "foreman", -1, "rank"), ("assembly", "foreman", 1001, "rank"),
        ]
        for (app, code, rank, field) in cases {
            let error = await #expect(throws: ParleyError.self) {
                try await service.createRole(appCode: app, code: code, name: "Foreman", rank: rank)
            }
            #expect(error?.code == .invalidRequest)
            #expect(error?.field == field, "\(app) \(code) \(rank)")
        }
        #expect(await directory.roles.isEmpty)
    }

    @Test func takingAwayWhatWasNeverGivenIsNotFound() async throws {
        let group = try await service.createGroup(name: "Crew")
        try await service.addMember(groupID: group.id, userID: 5)
        try await service.removeMember(groupID: group.id, userID: 5)
        let notMember = await #expect(throws: ParleyError.self) {
            try await service.removeMember(groupID: group.id, userID: 5)
        }
        #expect(notMember?.code == .notFound)
        let notHeld = await #expect(throws: ParleyError.self) { try await service.revokeRole(userID: 5, roleID: 1) }
        #expect(notHeld?.code == .notFound)
    }
}

/// Hashing that a test can check, instantly.
struct ReversingHasher: PasswordHasher {
    func hash(_ password: String) async throws -> String { String(password.reversed()) }
    func verify(_ password: String, hash: String) async throws -> Bool { String(password.reversed()) == hash }
}

actor InMemoryUsers: UserRepository {
    private(set) var accounts: [Int64: User] = [:]
    private(set) var hashes: [Int64: String] = [:]

    func create(_ user: NewUser) async throws -> User {
        guard !accounts.values.contains(where: { $0.email == user.email }) else {
            throw ParleyError(.emailTaken, "taken")
        }
        let created = User(
            id: Int64(accounts.count + 1), email: user.email, firstName: user.firstName, lastName: user.lastName,
            isAdmin: user.isAdmin, createdAt: Date())
        accounts[created.id] = created
        hashes[created.id] = user.passwordHash
        return created
    }

    func find(id: Int64) async throws -> User? { accounts[id] }

    /// Stores `user` as it is (what an adapter's own update writes).
    func replace(_ user: User) { accounts[user.id] = user }

    func credentials(email: String) async throws -> (user: User, passwordHash: String)? {
        accounts.values.first { $0.email == email }.map { ($0, hashes[$0.id] ?? "") }
    }

    func passwordHash(userID: Int64) async throws -> String? { hashes[userID] }

    private var deactivated = Set<Int64>()

    func setDeactivated(id: Int64, deactivated value: Bool) async throws -> Bool {
        guard accounts[id] != nil else { return false }
        if value { deactivated.insert(id) } else { deactivated.remove(id) }
        return true
    }

    func isDeactivated(id: Int64) async throws -> Bool { deactivated.contains(id) }

    func update(id: Int64, firstName: String?, lastName: String?, passwordHash: String?) async throws -> User? {
        guard var user = accounts[id] else { return nil }
        user.firstName = firstName ?? user.firstName
        user.lastName = lastName ?? user.lastName
        accounts[id] = user
        if let passwordHash { hashes[id] = passwordHash }
        return user
    }

    func search(prefix: String?, emailPrefix: Bool, roomMatesOf viewer: Int64?, after cursor: Int64?, limit: Int)
        async throws -> [User]
    {
        precondition(viewer == nil, "rooms are not modelled here")
        return accounts.values.filter { user in
            user.id > (cursor ?? 0)
                && prefix.map {
                    user.firstName.hasPrefix($0) || user.lastName.hasPrefix($0) || user.email == $0
                        || (emailPrefix && user.email.hasPrefix($0))
                } ?? true
        }
        .sorted { $0.id < $1.id }.prefix(limit).map { $0 }
    }
}

actor InMemoryDirectory: DirectoryRepository {
    private(set) var groups: [UserGroup] = []
    private(set) var members: Set<[Int64]> = []
    private(set) var roles: [Role] = []
    private(set) var grants: Set<[Int64]> = []

    func createGroup(name: String) async throws -> UserGroup {
        guard !groups.contains(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw ParleyError.conflict(.conflict, "taken")
        }
        let group = UserGroup(id: Int64(groups.count + 1), name: name, createdAt: Date())
        groups.append(group)
        return group
    }

    func addMember(groupID: Int64, userID: Int64) async throws { members.insert([groupID, userID]) }

    func removeMember(groupID: Int64, userID: Int64) async throws -> Bool {
        members.remove([groupID, userID]) != nil
    }

    func applications() async throws -> [Application] { [] }

    func createRole(appCode: String, code: String, name: String, rank: Int) async throws -> Role {
        let role = Role(id: Int64(roles.count + 1), code: code, name: name, rank: rank)
        roles.append(role)
        return role
    }

    func grantRole(userID: Int64, roleID: Int64) async throws { grants.insert([userID, roleID]) }

    func revokeRole(userID: Int64, roleID: Int64) async throws -> Bool { grants.remove([userID, roleID]) != nil }
}
