import Foundation
import ParleyCore
import Synchronization
import Testing

/// The provisioning rule over in-memory fakes: who is created, refreshed, linked or refused.
struct IdentityProvisioningTests {
    let users = InMemoryUsers()
    let identities: InMemoryIdentities

    init() { identities = InMemoryIdentities(users: users) }

    func rule(link: Bool = false) -> IdentityProvisioning {
        IdentityProvisioning(identities: identities, users: users, linkVerifiedEmail: link)
    }

    static let ada = ExternalIdentity(issuer: "https://id.example.com", subject: "ada")

    @Test func aFirstSightCreatesAndLaterOnesRefreshOnlyWhatIsSaid() async throws {
        let first = try await rule().upsert(
            Self.ada, profile: ExternalProfile(email: "ada@example.com", firstName: nil, lastName: nil))
        #expect(first.created)
        #expect(first.user.firstName == "ada" && first.user.lastName == "ada")
        let renamed = try await rule().upsert(
            Self.ada, profile: ExternalProfile(email: nil, firstName: "Ada", lastName: "Lovelace"))
        #expect(!renamed.created && renamed.user.id == first.user.id)
        #expect(renamed.user.email == "ada@example.com" && renamed.user.lastName == "Lovelace")
        let moved = try await rule().upsert(
            Self.ada, profile: ExternalProfile(email: "ada@new.example", firstName: nil, lastName: nil))
        #expect(moved.user.email == "ada@new.example" && moved.user.firstName == "Ada")
        #expect(await users.accounts.count == 1)
    }

    @Test func aNewUserNeedsAValidEmailAndNamesThatFit() async throws {
        for (profile, field) in [
            (ExternalProfile(email: nil, firstName: "A", lastName: "B"), "email"),
            (ExternalProfile(email: "not-an-address", firstName: "A", lastName: "B"), "email"),
            (
                ExternalProfile(email: "a@example.com", firstName: String(repeating: "x", count: 101), lastName: nil),
                "firstName"
            ),
        ] {
            let error = await #expect(throws: ParleyError.self) { try await rule().upsert(Self.ada, profile: profile) }
            #expect(error?.code == .invalidRequest && error?.field == field)
        }
        let long = ExternalIdentity(issuer: Self.ada.issuer, subject: String(repeating: "s", count: 256))
        let error = await #expect(throws: ParleyError.self) {
            try await rule().upsert(
                long, profile: ExternalProfile(email: "a@example.com", firstName: nil, lastName: nil))
        }
        #expect(error?.field == "externalId")
        #expect(await users.accounts.isEmpty)
    }

    @Test func anAccountWithTheEmailIsLinkedOnlyWhenVerifiedAndLinkingIsOn() async throws {
        let owner = try await users.create(
            NewUser(email: "owner@example.com", firstName: "O", lastName: "W", passwordHash: "hash"))
        for (link, verified) in [(false, false), (false, true), (true, false)] {
            let profile = ExternalProfile(
                email: "owner@example.com", firstName: nil, lastName: nil, emailVerified: verified)
            let error = await #expect(throws: ParleyError.self) {
                try await rule(link: link).upsert(Self.ada, profile: profile)
            }
            #expect(error?.code == .emailTaken, "link \(link), verified \(verified)")
        }
        #expect(await identities.links.isEmpty)
        #expect(await users.accounts.count == 1)
        let linked = try await rule(link: true).upsert(
            Self.ada,
            profile: ExternalProfile(
                email: "owner@example.com", firstName: "Olga", lastName: nil,
                emailVerified: true))
        #expect(!linked.created && linked.user.id == owner.id && linked.user.firstName == "Olga")
        #expect(await identities.links[Self.ada] == owner.id)
    }

    @Test func aConcurrentFirstSightOfTheSameIdentityEndsInOneUser() async throws {
        let profile = ExternalProfile(email: "ada@example.com", firstName: "Ada", lastName: "L")
        let winner = try await rule().upsert(Self.ada, profile: profile)
        // The other one looked before the winner linked: its create finds the identity taken.
        await identities.hideNextLookup()
        let second = try await rule().upsert(Self.ada, profile: profile)
        #expect(!second.created && second.user.id == winner.user.id)
        #expect(await users.accounts.count == 1)
    }
}

/// Links of issuers' users to accounts, over ``InMemoryUsers``.
actor InMemoryIdentities: IdentityRepository {
    let users: InMemoryUsers
    private(set) var links: [ExternalIdentity: Int64] = [:]
    private var hidingNextLookup = false

    init(users: InMemoryUsers) { self.users = users }

    /// The next lookup misses (it ran before a concurrent link).
    func hideNextLookup() { hidingNextLookup = true }

    func user(of identity: ExternalIdentity) async throws -> User? {
        if hidingNextLookup {
            hidingNextLookup = false
            return nil
        }
        guard let id = links[identity] else { return nil }
        return try await users.find(id: id)
    }

    func userIDs(issuer: String, subjects: [String]) async throws -> [String: Int64] {
        var found: [String: Int64] = [:]
        for subject in subjects { found[subject] = links[ExternalIdentity(issuer: issuer, subject: subject)] }
        return found
    }

    func create(_ user: NewUser, for identity: ExternalIdentity) async throws -> User {
        guard links[identity] == nil else { throw ParleyError.identityLinked }
        let created = try await users.create(user)
        links[identity] = created.id
        return created
    }

    func link(_ identity: ExternalIdentity, to userID: Int64) async throws -> Bool {
        guard links[identity] == nil else { throw ParleyError.identityLinked }
        guard !links.contains(where: { $0.key.issuer == identity.issuer && $0.value == userID }) else { return false }
        links[identity] = userID
        return true
    }

    func update(userID: Int64, email: String?, firstName: String?, lastName: String?) async throws -> User? {
        guard var user = try await users.find(id: userID) else { return nil }
        if let email {
            if try await users.credentials(email: email).map({ $0.user.id != userID }) == true {
                throw ParleyError(.emailTaken, "taken")
            }
            user.email = email
        }
        user.firstName = firstName ?? user.firstName
        user.lastName = lastName ?? user.lastName
        await users.replace(user)
        return user
    }
}
