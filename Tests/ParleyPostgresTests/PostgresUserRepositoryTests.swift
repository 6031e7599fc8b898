import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import Testing

struct PostgresUserRepositoryTests {
    @Test func createsAndFindsAUser() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: true)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let users = PostgresUserRepository(database: pool, logger: .quiet, fileLinks: .testing)
            let created = try await users.create(
                NewUser(
                    email: "ada@example.com", firstName: "Ada", lastName: "Lovelace", passwordHash: "h", isAdmin: true))
            #expect(created.id > 0)
            #expect(created.isAdmin)
            #expect(try await users.find(id: created.id) == created)
            #expect(try await users.find(id: created.id + 1000) == nil)
        }
    }

    @Test func aSecondAccountWithTheSameEmailInAnyCaseIsEmailTaken() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: true)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let users = PostgresUserRepository(database: pool, logger: .quiet, fileLinks: .testing)
            _ = try await users.create(
                NewUser(email: "ada@example.com", firstName: "A", lastName: "L", passwordHash: "h"))
            let error = await #expect(throws: ParleyError.self) {
                try await users.create(
                    NewUser(email: "ADA@example.com", firstName: "A", lastName: "L", passwordHash: "h"))
            }
            #expect(error?.code == .emailTaken)
        }
    }
}
