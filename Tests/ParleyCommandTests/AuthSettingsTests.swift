import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

@testable import parley

/// `PARLEY_AUTH_*`: the issuers file is read and checked at the start, naming what is wrong.
struct AuthSettingsTests {
    func file(_ text: String) throws -> String {
        let path = TestScratch.path("issuers", suffix: ".json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func settings(_ environment: [String: String]) -> Settings { Settings(environment: environment) }

    @Test func theDefaultsTrustNoIssuerLinkNothingAndLetPasswordsIn() throws {
        let defaults = settings([:])
        #expect(try defaults.trustedIssuers().isEmpty)
        #expect(try !defaults.linkVerifiedEmail())
        #expect(try defaults.accountPolicy().passwordSignIn)
        #expect(defaults.issuersCAFile == nil)
        let off = settings(["PARLEY_AUTH_PASSWORD": "off", "PARLEY_AUTH_LINK_VERIFIED_EMAIL": "on"])
        #expect(try !off.accountPolicy().passwordSignIn)
        #expect(try off.linkVerifiedEmail())
    }

    @Test func anIssuersFileIsReadWithEachEntrysKeySourceAndClaims() throws {
        let path = try file(
            """
            [{"issuer": "https://login.example.com/", "audience": "parley", "algorithms": ["RS256"],
              "jwksUrl": "https://login.example.com/jwks.json"},
             {"issuer": "internal", "audience": "parley", "algorithms": ["ES256", "EdDSA"], "jwksFile": "/etc/k.json",
              "claims": {"email": "mail"}}]
            """)
        let issuers = try settings(["PARLEY_AUTH_ISSUERS_FILE": path]).trustedIssuers()
        #expect(issuers.map(\.issuer) == ["https://login.example.com/", "internal"])
        #expect(issuers[0].keys == .url(URL(string: "https://login.example.com/jwks.json")!))
        #expect(issuers[1].keys == .file("/etc/k.json") && issuers[1].algorithms == [.es256, .edDSA])
        #expect(issuers[1].claims == TrustedIssuer.ClaimNames(email: "mail"))
    }

    @Test(arguments: [
        ("not json", "the document"),
        (#"{"issuer": "i"}"#, "is of the wrong type"),
        (#"[{"issuer": "i", "audience": "a", "jwksUrl": "http://x", "algorithms": ["RS256"]}]"#, "[0].jwksUrl"),
        (#"[{"issuer": "i", "audience": "a", "jwksFile": "/k", "algorithms": ["HS256"]}]"#, "[0].algorithms"),
        (#"[{"issuer": "i", "jwksFile": "/k", "algorithms": ["RS256"]}]"#, "[0].audience is missing"),
        (
            #"[{"issuer": "i", "audience": "a", "jwksFile": "/k", "algorithms": ["RS256"]},"#
                + #"{"issuer": "i", "audience": "b", "jwksFile": "/k", "algorithms": ["RS256"]}]"#, "i twice"
        ),
    ])
    func aWrongIssuersFileStopsTheStartNamingWhatIsWrong(text: String, named: String) throws {
        let path = try file(text)
        let error = #expect(throws: SettingsError.self) {
            try settings(["PARLEY_AUTH_ISSUERS_FILE": path]).trustedIssuers()
        }
        let message = error.map(String.init(describing:)) ?? ""
        #expect(message.hasPrefix("PARLEY_AUTH_ISSUERS_FILE must be") && message.contains(named), "\(message)")
    }

    @Test func aMissingIssuersFileOrCAFileStopsTheStart() throws {
        #expect(throws: SettingsError.self) {
            try settings(["PARLEY_AUTH_ISSUERS_FILE": "/nonexistent/issuers.json"]).trustedIssuers()
        }
        let byURL = [
            TrustedIssuer(
                issuer: "i", audience: "a", keys: .url(URL(string: "https://id.example/k")!), algorithms: [.rs256])
        ]
        let notPEM = try file("not a certificate")
        let error = #expect(throws: SettingsError.self) {
            try Adapters.issuerKeyFetcher(for: byURL, caFile: notPEM, rule: OutboundRule())
        }
        #expect(error.map(String.init(describing:))?.hasPrefix("PARLEY_AUTH_CA_FILE must be") == true)
        // No issuer's keys at a URL: no HTTPS client at all.
        let byFile = [TrustedIssuer(issuer: "i", audience: "a", keys: .file("/k"), algorithms: [.rs256])]
        #expect(try Adapters.issuerKeyFetcher(for: byFile, caFile: notPEM, rule: OutboundRule()) == nil)
    }
}
