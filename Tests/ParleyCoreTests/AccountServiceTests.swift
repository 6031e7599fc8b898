import Foundation
import ParleyCore
import Synchronization
import Testing

/// The account rules over in-memory fakes of every port: milliseconds, no PostgreSQL or Redis.
struct AccountServiceTests {
    let users = InMemoryUsers()
    let sessions = InMemorySessions()
    let hasher = CountingHasher()
    let limiter = CountingLimiter()
    let announced = Announcements()

    func makeService(_ policy: AccountPolicy = AccountPolicy()) throws -> AccountService {
        let announced = self.announced
        return AccountService(
            users: users, sessions: sessions, hasher: hasher, limiter: limiter, revocations: announced,
            broker: announced, mqttKey: try MQTTTokenKey(bytes: Array(repeating: 1, count: 32)), policy: policy,
            revokedLocally: { announced.local($0) })
    }

    func registered(_ service: AccountService, email: String = "ada@example.com") async throws -> User {
        try await service.register(
            NewUser(email: email, firstName: "Ada", lastName: "L", passwordHash: ""), password: "correct horse",
            clientAddress: "10.0.0.1")
    }

    @Test func aClosedRegistrationAndTooManyAttemptsAreRefused() async throws {
        let closed = await #expect(throws: ParleyError.self) {
            try await registered(try makeService(AccountPolicy(registrationOpen: false)))
        }
        #expect(closed?.code == .registrationClosed)

        let service = try makeService(AccountPolicy(registerLimitPerAddress: 2))
        _ = try await registered(service, email: "a@example.com")
        _ = try await registered(service, email: "b@example.com")
        let limited = await #expect(throws: ParleyError.self) { try await registered(service, email: "c@example.com") }
        #expect(limited?.code == .rateLimited)
        #expect(limited?.retryAfter == 60)
        #expect(await users.accounts.count == 2)
    }

    @Test func anUnknownEmailAndAWrongPasswordAnswerAlikeAfterTheSameHashing() async throws {
        let service = try makeService()
        _ = try await registered(service)
        for (email, password) in [("ADA@example.com ", "wrong password"), ("nobody@example.com", "correct horse")] {
            let before = hasher.verifications
            let error = await #expect(throws: ParleyError.self) {
                try await service.login(email: email, password: password, device: .init(), clientAddress: nil)
            }
            #expect(error?.code == .invalidCredentials)
            #expect(error?.detail == "The e-mail or the password is wrong.")
            #expect(hasher.verifications == before + 1, "one verification either way")
        }
        let signedIn = try await service.login(
            email: " Ada@Example.com", password: "correct horse", device: .init(), clientAddress: nil)
        #expect(signedIn.user.email == "ada@example.com")
        #expect(signedIn.clientID.hasPrefix("parley-\(signedIn.user.id)-"))
        #expect(await limiter.keys.contains("login:email:ada@example.com:address:unknown"))
    }

    @Test func passwordGuessesElsewhereLeaveTheOwnersAddressItsBudget() async throws {
        let service = try makeService(AccountPolicy(loginLimitPerEmail: 3, loginLimitPerAccount: 5))
        _ = try await registered(service)
        let owner = try await service.login(
            email: "ada@example.com", password: "correct horse", device: .init(), clientAddress: "10.0.0.1")
        func attempt(_ password: String, from address: String) async -> ParleyError.Code? {
            do {
                _ = try await service.login(
                    email: "ada@example.com", password: password, device: .init(), clientAddress: address)
                return nil
            } catch let error as ParleyError { return error.code } catch { return .internalError }
        }
        // One address: its own budget of three.
        for _ in 0..<3 { #expect(await attempt("guess", from: "192.0.2.1") == .invalidCredentials) }
        #expect(await attempt("guess", from: "192.0.2.1") == .rateLimited)
        // New addresses share five in all, whatever their number (the owner's first sign-in,
        // from an address new then, was one of them).
        #expect(await attempt("guess", from: "192.0.2.2") == .invalidCredentials)
        #expect(await attempt("guess", from: "192.0.2.3") == .rateLimited)
        // The owner's address signed in before: its budget is its own.
        #expect(await attempt("correct horse", from: "10.0.0.1") == nil)

        // A password re-check spends the same budget as a login from that address.
        let identity = AuthenticatedUser(
            userID: owner.user.id, sessionID: 1, deviceID: nil, isAdmin: false, expiresAt: .distantFuture)
        func recheck() async -> ParleyError.Code? {
            do {
                _ = try await service.updateProfile(
                    identity, firstName: nil, lastName: nil, password: "new password 1", currentPassword: "wrong one",
                    clientAddress: "10.0.0.1")
                return nil
            } catch let error as ParleyError { return error.code } catch { return .internalError }
        }
        #expect(await recheck() == .invalidCredentials)
        #expect(await recheck() == .rateLimited)
        #expect(await attempt("correct horse", from: "10.0.0.1") == .rateLimited)
    }

    @Test func aSpentRefreshTokenRevokesItsSessionEverywhere() async throws {
        let service = try makeService()
        _ = try await registered(service)
        let first = try await service.login(
            email: "ada@example.com", password: "correct horse", device: .init(), clientAddress: nil)
        let second = try await service.refresh(token: first.tokens.refresh.value)
        #expect(second.clientID == first.clientID)
        #expect(second.tokens.refresh != first.tokens.refresh)

        let reused = await #expect(throws: ParleyError.self) {
            try await service.refresh(token: first.tokens.refresh.value)
        }
        #expect(reused?.code == .unauthorized)
        #expect(announced.locally == [[1]])
        #expect(announced.published == [[1]])
        #expect(announced.ended == [Announcements.Ended(sessions: [1], clientIDs: [first.clientID])])
        let invalid = await #expect(throws: ParleyError.self) { try await service.refresh(token: "never issued") }
        #expect(invalid?.code == .unauthorized)
    }

    @Test func aNewPasswordNeedsTheCurrentOneAndEndsEveryOtherSession() async throws {
        let service = try makeService()
        _ = try await registered(service)
        var logins: [AccountService.SignedIn] = []
        for _ in 0..<3 {
            logins.append(
                try await service.login(
                    email: "ada@example.com", password: "correct horse", device: .init(), clientAddress: nil))
        }
        let me = AuthenticatedUser(
            userID: logins[0].user.id, sessionID: 1, deviceID: nil, isAdmin: false, expiresAt: Date())
        let missing = await #expect(throws: ParleyError.self) {
            try await service.updateProfile(
                me, firstName: nil, lastName: nil, password: "new password", currentPassword: nil,
                clientAddress: nil)
        }
        #expect(missing?.field == "currentPassword")
        let wrong = await #expect(throws: ParleyError.self) {
            try await service.updateProfile(
                me, firstName: nil, lastName: nil, password: "new password", currentPassword: "not it at all",
                clientAddress: nil)
        }
        #expect(wrong?.code == .invalidCredentials)
        #expect(announced.ended.isEmpty)

        _ = try await service.updateProfile(
            me, firstName: "Augusta", lastName: nil, password: "new password", currentPassword: "correct horse",
            clientAddress: nil)
        #expect(announced.locally == [[2, 3]])
        #expect(announced.ended.first?.clientIDs.sorted() == [logins[1].clientID, logins[2].clientID].sorted())
        #expect(await users.hashes[me.userID] == "drowssap wen")
        #expect(await users.accounts[me.userID]?.firstName == "Augusta")
    }
}

/// Hashing a test can check, instantly, counting verifications.
final class CountingHasher: PasswordHasher {
    private let count = Mutex(0)
    var verifications: Int { count.withLock { $0 } }

    func hash(_ password: String) async throws -> String { String(password.reversed()) }
    func verify(_ password: String, hash: String) async throws -> Bool {
        count.withLock { $0 += 1 }
        return String(password.reversed()) == hash
    }
}

/// A fixed-window limiter that remembers its keys.
actor CountingLimiter: RateLimiter {
    private var hits: [String: Int] = [:]
    var keys: Set<String> { Set(hits.keys) }

    private var remembered: Set<String> = []

    func hit(_ key: String, limit: Int, window: Duration) async throws -> Int? {
        hits[key, default: 0] += 1
        return hits[key, default: 0] > limit ? Int(window.components.seconds) : nil
    }

    func remember(_ key: String, for lifetime: Duration) async throws { remembered.insert(key) }
    func remembers(_ key: String) async throws -> Bool { remembered.contains(key) }
}

/// What the service told the local cache, the other instances and the broker.
final class Announcements: SessionRevocationBus, BrokerSessionControl {
    struct Ended: Equatable {
        let sessions: [Int64]
        let clientIDs: [String]
    }
    private let state = Mutex<(locally: [[Int64]], published: [[Int64]], ended: [Ended])>(([], [], []))
    var locally: [[Int64]] { state.withLock { $0.locally } }
    var published: [[Int64]] { state.withLock { $0.published } }
    var ended: [Ended] { state.withLock { $0.ended } }

    func local(_ sessions: [Int64]) { state.withLock { $0.locally.append(sessions.sorted()) } }
    func publish(revokedSessions: [Int64]) async throws {
        state.withLock { $0.published.append(revokedSessions.sorted()) }
    }
    func end(sessions: [Int64], clientIDs: [String]) async {
        state.withLock { $0.ended.append(Ended(sessions: sessions.sorted(), clientIDs: clientIDs)) }
    }
}

/// Sessions with rotating refresh tokens, in memory.
actor InMemorySessions: SessionRepository {
    struct Stored {
        let userID: Int64
        let clientID: String
        var refreshHash: [UInt8]
        var spent: [[UInt8]] = []
        var revoked = false
    }
    private var sessions: [Int64: Stored] = [:]

    func openSession(
        userID: Int64, device: DeviceRegistration, tokens: IssuedTokens, clientID: String
    ) async throws -> (sessionID: Int64, deviceID: Int64) {
        let id = Int64(sessions.count + 1)
        sessions[id] = Stored(userID: userID, clientID: clientID, refreshHash: tokens.refresh.hash)
        return (id, id)
    }

    func authenticate(accessTokenHash: [UInt8], now: Date) async throws -> AuthenticatedUser? { nil }

    func refresh(refreshTokenHash: [UInt8], next: IssuedTokens, now: Date) async throws -> RefreshOutcome {
        for (id, session) in sessions where !session.revoked {
            if session.refreshHash == refreshTokenHash {
                sessions[id]?.spent.append(refreshTokenHash)
                sessions[id]?.refreshHash = next.refresh.hash
                return .rotated(sessionID: id, userID: session.userID, deviceID: id, clientID: session.clientID)
            }
            if session.spent.contains(refreshTokenHash) {
                sessions[id]?.revoked = true
                return .reused(sessionID: id, clientIDs: [session.clientID])
            }
        }
        return .invalid
    }

    func revoke(sessionID: Int64) async throws -> [String] {
        sessions[sessionID]?.revoked = true
        return sessions[sessionID].map { [$0.clientID] } ?? []
    }

    func revokeOthers(userID: Int64, except sessionID: Int64) async throws -> (sessions: [Int64], clientIDs: [String]) {
        let others = sessions.filter { $0.value.userID == userID && $0.key != sessionID && !$0.value.revoked }
        for id in others.keys { sessions[id]?.revoked = true }
        let ids = others.keys.sorted()
        return (ids, ids.compactMap { sessions[$0]?.clientID })
    }

    func devices(userID: Int64) async throws -> [Device] { [] }
    func isClientActive(clientID: String, userID: Int64, sessionID: Int64) async throws -> Bool { false }
    func setPushToken(userID: Int64, deviceID: Int64, registration: PushRegistration) async throws -> Bool { false }
    func deleteDevice(userID: Int64, deviceID: Int64) async throws -> (sessions: [Int64], clientIDs: [String])? {
        nil
    }
}

extension AccountServiceTests {
    @Test func aDeactivatedAccountIsSignedOutEverywhereAndRefusedOnlyWithTheRightPassword() async throws {
        let service = try makeService()
        let user = try await registered(service)
        let signedIn = try await service.login(
            email: "ada@example.com", password: "correct horse", device: .init(), clientAddress: nil)
        try await service.setDeactivated(userID: user.id, true)
        // This instance, the others and the broker (which disconnects the account's clients).
        #expect(announced.locally.last?.count == 1 && announced.published.last == announced.locally.last)
        #expect(announced.ended.last?.clientIDs == [signedIn.clientID])
        let refused = await #expect(throws: ParleyError.self) {
            try await service.login(
                email: "ada@example.com", password: "correct horse", device: .init(), clientAddress: nil)
        }
        #expect(refused?.code == .accountDeactivated)
        let wrong = await #expect(throws: ParleyError.self) {
            try await service.login(
                email: "ada@example.com", password: "wrong horse", device: .init(), clientAddress: nil)
        }
        #expect(wrong?.code == .invalidCredentials)
        try await service.setDeactivated(userID: user.id, false)
        _ = try await service.login(
            email: "ada@example.com", password: "correct horse", device: .init(), clientAddress: nil)
        let unknown = await #expect(throws: ParleyError.self) { try await service.setDeactivated(userID: 999, true) }
        #expect(unknown?.code == .notFound)
    }
}
