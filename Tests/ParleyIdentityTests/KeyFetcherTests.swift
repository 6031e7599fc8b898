import Foundation
import ParleyCore
import ParleyIdentity
import ParleyTestSupport
import Testing

/// How the key readers read: `Cache-Control` as a lifetime, files bounded, and a trust store
/// that holds the test authority besides the system's.
struct KeyFetcherTests {
    @Test func maxAgeIsReadFromCacheControlAndNoStoreSaysNothing() {
        #expect(CacheControl.maxAge(["public, max-age=300"]) == .seconds(300))
        #expect(CacheControl.maxAge(["public", "Max-Age = 60 , must-revalidate"]) == .seconds(60))
        #expect(CacheControl.maxAge([#"max-age="120""#]) == .seconds(120))
        #expect(CacheControl.maxAge(["no-store, max-age=300"]) == nil)
        #expect(CacheControl.maxAge(["max-age=soon"]) == nil)
        #expect(CacheControl.maxAge([]) == nil)
    }

    @Test func aKeyFileIsReadUpToItsLimit() async throws {
        let path = TestScratch.path("jwks", suffix: ".json")
        try Data(#"{"keys": []}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try await FileKeyFetcher().fetch(path) == Array(#"{"keys": []}"#.utf8))
        try Data(count: FileKeyFetcher.sizeLimit + 1).write(to: URL(fileURLWithPath: path))
        await #expect(throws: IssuerKeyReadError.self) { try await FileKeyFetcher().fetch(path) }
        await #expect(throws: IssuerKeyReadError.self) { try await FileKeyFetcher().fetch(path + ".missing") }
    }

    @Test func anIssuerUnderAPrivateAuthorityIsTrustedOnlyWithItsCAFile() async throws {
        let key = TestIssuer.Key.ed25519("d1")
        let issuer = try await TestIssuer.start([key], maxAge: 900)
        let trusting = try HTTPSKeyFetcher(caFile: try issuer.authority.writeCertificate(), rule: TestIssuer.loopback)
        let systemOnly = try HTTPSKeyFetcher(rule: TestIssuer.loopback)
        let url = try #require(URL(string: issuer.jwksURL))
        let read = await Result { try await trusting.fetch(url) }
        let refused = await Result { try await systemOnly.fetch(url) }
        try await trusting.shutdown()
        try await systemOnly.shutdown()
        await issuer.stop()
        let (document, maxAge) = try read.get()
        #expect(try JSONWebKeySet(json: document).keyIDs == ["d1"])
        #expect(maxAge == .seconds(900))
        #expect(throws: (any Error).self) { try refused.get() }
        #expect(issuer.reads == 1)
    }
}

/// An issuer's keys are read only where Parley's outbound rule allows: a loopback issuer
/// (the test's) only once its range is opened.
struct KeyFetcherOutboundTests {
    @Test func anIssuerAtARefusedAddressIsNotRead() async throws {
        let key = TestIssuer.Key.p256("o1")
        let issuer = try await TestIssuer.start([key], maxAge: 60)
        let closed = try HTTPSKeyFetcher(caFile: try issuer.authority.writeCertificate())
        let url = try #require(URL(string: issuer.jwksURL))
        let refused = await Result { try await closed.fetch(url) }
        try await closed.shutdown()
        await issuer.stop()
        #expect(throws: IssuerKeyReadError.self) { try refused.get() }
        #expect(issuer.reads == 0)
    }
}

extension Result where Failure == any Error {
    /// The outcome of `body`, so that what the test started is stopped either way.
    init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
