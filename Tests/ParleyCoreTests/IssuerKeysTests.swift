import Crypto
import Foundation
import Synchronization
import Testing

@testable import ParleyCore

/// The issuers' keys are kept as their source allows and read again on a rotation, never
/// more than once a minute.
struct IssuerKeysTests {
    /// A key document per read, and how many reads there were.
    final class Documents: IssuerKeyFetcher {
        let state = Mutex((documents: [String](), maxAge: Duration?.none, reads: 0))

        init(_ document: String, maxAge: Duration? = nil) { state.withLock { $0 = ([document], maxAge, 0) } }

        func publish(_ document: String) { state.withLock { $0.documents.append(document) } }
        var reads: Int { state.withLock { $0.reads } }

        func fetch(_ source: TrustedIssuer.KeySource) async throws -> (document: [UInt8], maxAge: Duration?) {
            state.withLock { state in
                state.reads += 1
                return (Array(state.documents.last!.utf8), state.maxAge)
            }
        }
    }

    final class TestClock: Sendable {
        let start = ContinuousClock.now
        let offset = Mutex(Duration.zero)
        func advance(_ by: Duration) { offset.withLock { $0 += by } }
        var now: ContinuousClock.Instant { start.advanced(by: offset.withLock { $0 }) }
    }

    static func document(_ keys: [(kid: String, key: P256.Signing.PrivateKey)]) -> String {
        let entries = keys.map { kid, key in
            let raw = Array(key.publicKey.rawRepresentation)
            return """
                {"kty": "EC", "crv": "P-256", "kid": "\(kid)", "x": "\(Base64URL.encode(Array(raw[0..<32])))",
                 "y": "\(Base64URL.encode(Array(raw[32..<64])))"}
                """
        }
        return #"{"keys": ["# + entries.joined(separator: ",") + "]}"
    }

    static func token(kid: String, key: P256.Signing.PrivateKey) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(kid)"}"#.utf8))
        let claims = Base64URL.encode(
            Array(
                #"{"iss":"https://id.example.com","aud":"parley-app","sub":"u1","exp":\#(Int(Date().timeIntervalSince1970) + 600)}"#
                    .utf8))
        let signature = try key.signature(for: Data((header + "." + claims).utf8))
        return header + "." + claims + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    static let issuer = TrustedIssuer(
        issuer: "https://id.example.com", audience: "parley-app", keys: .url(URL(string: "https://id.example.com/k")!),
        algorithms: [.es256])

    @Test func keysAreKeptAsLongAsTheSourceSaysWithinAMinuteAndADay() async throws {
        let key = P256.Signing.PrivateKey()
        for (maxAge, keptFor) in [
            (Duration.seconds(300), Duration.seconds(300)), (.seconds(5), .seconds(60)),
            (.seconds(900_000), .seconds(86_400)), (nil, .seconds(60)),
        ] {
            let documents = Documents(Self.document([("a", key)]), maxAge: maxAge)
            let clock = TestClock()
            let keys = IssuerKeys(fetcher: documents, now: { clock.now })
            _ = try await keys.keys(for: Self.issuer)
            clock.advance(keptFor - .seconds(1))
            _ = try await keys.keys(for: Self.issuer)
            #expect(documents.reads == 1, "kept for \(keptFor) with max-age \(String(describing: maxAge))")
            clock.advance(.seconds(2))
            _ = try await keys.keys(for: Self.issuer)
            #expect(documents.reads == 2, "read again after \(keptFor)")
        }
    }

    @Test func aRotatedKeyIsFoundAfterAMinuteAndNotSooner() async throws {
        let (old, new) = (P256.Signing.PrivateKey(), P256.Signing.PrivateKey())
        let documents = Documents(Self.document([("old", old)]), maxAge: .seconds(3600))
        let clock = TestClock()
        let verifier = IssuerTokenVerifier(
            issuers: [Self.issuer], keys: IssuerKeys(fetcher: documents, now: { clock.now }))

        #expect(try await verifier.identity(of: try Self.token(kid: "old", key: old)).subject == "u1")
        documents.publish(Self.document([("old", old), ("new", new)]))
        clock.advance(.seconds(30))
        // Asked again within the minute: not read again, so the new key is still unknown.
        await #expect(throws: IssuerTokenRefusal.unknownKey("new")) {
            try await verifier.identity(of: try Self.token(kid: "new", key: new))
        }
        #expect(documents.reads == 1)
        clock.advance(.seconds(31))
        #expect(try await verifier.identity(of: try Self.token(kid: "new", key: new)).subject == "u1")
        #expect(documents.reads == 2)
        // Made-up key ids cost the issuer at most a read a minute.
        for _ in 0..<5 {
            await #expect(throws: IssuerTokenRefusal.unknownKey("made-up")) {
                try await verifier.identity(of: try Self.token(kid: "made-up", key: new))
            }
        }
        #expect(documents.reads == 2)
    }

    @Test func aTokenOfAnIssuerNotTrustedIsRefusedWithoutReadingKeys() async throws {
        let key = P256.Signing.PrivateKey()
        let documents = Documents(Self.document([("a", key)]))
        let other = TrustedIssuer(
            issuer: "https://other.example", audience: "parley-app", keys: .file("/k"), algorithms: [.es256])
        let verifier = IssuerTokenVerifier(issuers: [other], keys: IssuerKeys(fetcher: documents))
        await #expect(throws: IssuerTokenRefusal.wrongIssuer) {
            try await verifier.identity(of: try Self.token(kid: "a", key: key))
        }
        #expect(documents.reads == 0)
    }
}
