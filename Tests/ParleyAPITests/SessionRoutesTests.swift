import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ParleyCore
import ParleyRedis
import ParleyTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import ParleyAPI

struct SessionRoutesTests {
    @Test func requestsWithoutAValidTokenAre401() async throws {
        try await APIHarness.make().run { client in
            for token in [nil, "not-a-token", String(repeating: "A", count: 43)] {
                let answer = try await client.json(.get, "/v1/me", token: token)
                #expect(answer.status == .unauthorized)
                #expect(answer.problem?.code == "unauthorized")
                #expect(answer.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            }
        }
    }

    @Test func anExpiredAccessTokenIs401() async throws {
        try await APIHarness.make(policy: AccountPolicy(accessTokenLifetime: .seconds(3))).run { client in
            let issued = ContinuousClock.now
            let login = try await client.signUp()
            // The token was issued before this moment, so it has expired 3 s after it.
            let loggedIn = ContinuousClock.now
            let fresh = try await client.json(.get, "/v1/me", token: token(login)).status
            // On a loaded machine the first request may already come late; it proves something only in time.
            if issued.duration(to: .now) < .milliseconds(2500) { #expect(fresh == .ok) }
            try await Task.sleep(until: loggedIn + .milliseconds(3300))
            #expect(try await client.json(.get, "/v1/me", token: token(login)).status == .unauthorized)
        }
    }

    @Test func refreshRotatesAndAReusedRefreshTokenRevokesTheSession() async throws {
        try await APIHarness.make().run { client in
            let login = try await client.signUp()
            let first = login.refreshToken
            let rotated = try await client.decoded(
                LoginResponse.self, .post, "/v1/auth/refresh", body: #"{"refreshToken":"\#(first)"}"#)
            #expect(rotated.refreshToken != first)
            #expect(rotated.mqtt.clientId == login.mqtt.clientId)
            let fresh = token(rotated)
            #expect(try await client.json(.get, "/v1/me", token: fresh).status == .ok)
            #expect(try await client.json(.get, "/v1/me", token: token(login)).status == .unauthorized)

            // Someone replays the spent token: the whole session ends.
            let replay = try await client.json(.post, "/v1/auth/refresh", body: #"{"refreshToken":"\#(first)"}"#)
            #expect(replay.status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", token: fresh).status == .unauthorized)
            let next = try await client.json(
                .post, "/v1/auth/refresh",
                body: #"{"refreshToken":"\#(rotated.refreshToken)"}"#)
            #expect(next.status == .unauthorized)

            let unknown = try await client.json(.post, "/v1/auth/refresh", body: #"{"refreshToken":"nope"}"#)
            #expect(unknown.status == .unauthorized)
            #expect(
                try await client.json(.post, "/v1/auth/refresh", body: "{}").problem?.field == "refreshToken")
        }
    }

    @Test func logoutRevokesTheSessionAndDropsThePushToken() async throws {
        try await APIHarness.make().run { client in
            let login = try await client.signUp(
                device: #"{"platform":"android","pushToken":"fcm-1","pushProvider":"fcm"}"#)
            let other = try await client.decoded(
                LoginResponse.self, .post, "/v1/auth/login",
                body: #"{"email":"\#(login.user.email ?? "")","password":"correct horse"}"#)
            #expect(try await client.json(.post, "/v1/auth/logout", token: token(login)).status == .noContent)
            #expect(try await client.json(.get, "/v1/me", token: token(login)).status == .unauthorized)
            let list = try await client.decoded(DevicesResponse.self, .get, "/v1/devices", token: token(other)).devices
            #expect(list.count == 2)
            #expect(list.allSatisfy { !$0.hasPushToken })
        }
    }

    /// Two API instances, each with its own cache: a logout on one is refused by the other
    /// within a second, through Redis pub/sub.
    @Test func revocationReachesAnotherInstanceWithinOneSecond() async throws {
        let harness = try await APIHarness.make(policy: AccountPolicy())
        let services = try TestServices.shared()
        let cacheB = SessionCache(lifetime: .seconds(60))
        let listening = ListeningFlag()
        let subscriber = RedisSubscriber(
            configuration: services.redis(), channel: RedisSessionRevocationBus.channel, logger: .quiet,
            onListening: {
                cacheB.setTrusted($0)
                listening.set($0)
            }, onMessage: { cacheB.revoke(message: $0) })
        let group = ServiceGroup(configuration: .init(services: [.init(service: subscriber)], logger: .quiet))
        let running = Task { try await group.run() }
        for _ in 0..<100 where !listening.value { try await Task.sleep(for: .milliseconds(20)) }
        #expect(listening.value)

        try await harness.database.withRunningClient { _ in
            let routerA = harness.publicRouter()
            let applicationB = Application(router: harness.publicRouter(cache: cacheB), logger: .quiet)
            try await Application(router: routerA, logger: .quiet).test(.router) { clientA in
                try await applicationB.test(.router) { clientB in
                    let login = try await clientA.signUp()
                    // B caches the token.
                    #expect(try await clientB.json(.get, "/v1/me", token: token(login)).status == .ok)
                    #expect(try await clientA.json(.post, "/v1/auth/logout", token: token(login)).status == .noContent)
                    let start = ContinuousClock.now
                    var refused = false
                    while !refused && ContinuousClock.now - start < .seconds(1) {
                        refused = try await clientB.json(.get, "/v1/me", token: token(login)).status == .unauthorized
                        if !refused { try await Task.sleep(for: .milliseconds(20)) }
                    }
                    #expect(refused)
                }
            }
        }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(!listening.value)
    }
}

final class ListeningFlag: Sendable {
    private let state = Mutex(false)
    func set(_ value: Bool) { state.withLock { $0 = value } }
    var value: Bool { state.withLock { $0 } }
}
