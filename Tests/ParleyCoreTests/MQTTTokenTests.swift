import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

/// The token format, pinned by `Tests/Vectors/mqtt-token.json` (the broker plugin's tests
/// read the same file).
struct MQTTTokenTests {
    static let vectors = try! MQTTTokenVectors.load()

    var key: MQTTTokenKey { try! MQTTTokenKey(bytes: Array(Data(base64Encoded: Self.vectors.keyBase64)!)) }
    var now: Date { Date(timeIntervalSince1970: TimeInterval(Self.vectors.verifiedAt)) }

    @Test func signingReproducesEveryVector() {
        for vector in Self.vectors.valid {
            let token = MQTTToken(
                userID: Int64(vector.userId)!, clientID: vector.clientId, sessionID: Int64(vector.sessionId)!,
                expiresAt: vector.expiresAt)
            #expect(token.signed(with: key) == vector.token)
        }
    }

    @Test func verificationRecoversTheClaims() throws {
        for vector in Self.vectors.valid {
            let token = try MQTTToken.verify(vector.token, key: key, now: now)
            #expect(token.userID == Int64(vector.userId))
            #expect(token.clientID == vector.clientId)
            #expect(token.sessionID == Int64(vector.sessionId))
            #expect(token.expiresAt == vector.expiresAt)
        }
    }

    @Test func invalidVectorsAreRefusedForTheirReason() {
        for vector in Self.vectors.invalid {
            let expected: MQTTToken.Failure =
                switch vector.reason {
                case "expired": .expired
                case "badSignature": .badSignature
                default: .malformed
                }
            #expect(throws: expected, "\(vector.token)") { try MQTTToken.verify(vector.token, key: key, now: now) }
        }
    }

    @Test func changingAnyOneCharacterIsRefused() {
        let token = Self.vectors.valid[0].token
        for index in token.indices {
            var changed = token
            let replacement: Character = token[index] == "A" ? "B" : "A"
            changed.replaceSubrange(index...index, with: String(replacement))
            #expect(throws: MQTTToken.Failure.self) { try MQTTToken.verify(changed, key: key, now: now) }
        }
    }

    @Test func aTokenIsAcceptedUntilItsExpiryAndRefusedFromThen() throws {
        let token = MQTTToken(userID: 5, clientID: "c", sessionID: 9, expiresAt: 2_000_000_000).signed(with: key)
        _ = try MQTTToken.verify(token, key: key, now: Date(timeIntervalSince1970: 1_999_999_999))
        #expect(throws: MQTTToken.Failure.expired) {
            try MQTTToken.verify(token, key: key, now: Date(timeIntervalSince1970: 2_000_000_000))
        }
    }

    @Test func anotherKeyIsRefused() throws {
        let other = try MQTTTokenKey(bytes: Array(repeating: 7, count: 32))
        #expect(throws: MQTTToken.Failure.badSignature) {
            try MQTTToken.verify(Self.vectors.valid[0].token, key: other, now: now)
        }
        #expect(throws: ParleyError.self) { try MQTTTokenKey(bytes: Array(repeating: 1, count: 31)) }
    }
}
