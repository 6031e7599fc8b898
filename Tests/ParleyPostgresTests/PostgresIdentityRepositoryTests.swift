import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import Testing

/// Issuers' users in `cloud.user_identity`: each constraint becomes the domain error the
/// provisioning rule branches on.
struct PostgresIdentityRepositoryTests {
    static let ada = ExternalIdentity(issuer: "https://id.example.com", subject: "ada")

    func withRepositories(
        _ body: @escaping @Sendable (PostgresIdentityRepository, PostgresUserRepository) async throws -> Void
    ) async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: true)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            try await body(
                PostgresIdentityRepository(database: pool, logger: .quiet, fileLinks: .testing),
                PostgresUserRepository(database: pool, logger: .quiet, fileLinks: .testing))
        }
    }

    @Test func aCreatedUserIsFoundByItsIdentityAndUpdated() async throws {
        try await withRepositories { identities, users in
            let created = try await identities.create(
                NewUser(email: "ada@example.com", firstName: "Ada", lastName: "L", passwordHash: "!"), for: Self.ada)
            #expect(try await identities.user(of: Self.ada) == created)
            #expect(try await identities.user(of: ExternalIdentity(issuer: "other", subject: "ada")) == nil)
            let updated = try await identities.update(
                userID: created.id, email: "ada@new.example", firstName: nil, lastName: "Lovelace")
            #expect(
                updated?.email == "ada@new.example" && updated?.firstName == "Ada" && updated?.lastName == "Lovelace")
            #expect(try await users.find(id: created.id) == updated)
        }
    }

    @Test func eachConflictIsItsOwnError() async throws {
        try await withRepositories { identities, users in
            let created = try await identities.create(
                NewUser(email: "ada@example.com", firstName: "A", lastName: "L", passwordHash: "!"), for: Self.ada)
            let other = try await users.create(
                NewUser(email: "bob@example.com", firstName: "B", lastName: "B", passwordHash: "h"))
            // The identity again, for a new account: linked already, and no account is left behind.
            let again = await #expect(throws: ParleyError.self) {
                try await identities.create(
                    NewUser(email: "new@example.com", firstName: "N", lastName: "N", passwordHash: "!"), for: Self.ada)
            }
            #expect(again == .identityLinked)
            #expect(try await users.credentials(email: "new@example.com") == nil)
            // A taken e-mail: email-taken, and the identity stays unlinked.
            let carol = ExternalIdentity(issuer: Self.ada.issuer, subject: "carol")
            let taken = await #expect(throws: ParleyError.self) {
                try await identities.create(
                    NewUser(email: "BOB@example.com", firstName: "C", lastName: "C", passwordHash: "!"), for: carol)
            }
            #expect(taken?.code == .emailTaken)
            #expect(try await identities.user(of: carol) == nil)
            // Linking: a second subject of one issuer for an account is refused.
            #expect(try await identities.link(carol, to: other.id))
            let dave = ExternalIdentity(issuer: Self.ada.issuer, subject: "dave")
            #expect(try await !identities.link(dave, to: other.id))
            #expect(try await identities.link(ExternalIdentity(issuer: "other", subject: "dave"), to: other.id))
            await #expect(throws: ParleyError.identityLinked) { try await identities.link(Self.ada, to: other.id) }
            // An update onto another account's e-mail.
            let moved = await #expect(throws: ParleyError.self) {
                try await identities.update(userID: created.id, email: "Bob@Example.com", firstName: nil, lastName: nil)
            }
            #expect(moved?.code == .emailTaken)
        }
    }
}
