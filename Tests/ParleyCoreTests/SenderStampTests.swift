import Crypto
import Foundation
import ParleyCore
import Testing

/// The plugin's signed `parley-user` stamp: only a signature made with the shared key over
/// this user, this topic and this payload vouches for the sender.
struct SenderStampTests {
    let key = try! SenderStampKey(bytes: Array(repeating: 9, count: 32))
    let payload = Array(#"{"type":"new-message-notification"}"#.utf8)

    func verified(user: String?, signature: String?, topic: String = "chat-in/r1", payload: [UInt8]? = nil) -> String? {
        SenderStamp.verifiedSender(
            user: user, signature: signature, topic: topic, payload: payload ?? self.payload, key: key)
    }

    @Test func theKeysSignatureVouchesForTheStampedUser() {
        let signature = SenderStamp.signature(user: "42", topic: "chat-in/r1", payload: payload, key: key)
        #expect(signature.count == 64)
        #expect(verified(user: "42", signature: signature) == "42")
    }

    @Test func anUnsignedOrWronglySignedStampVouchesForNobody() throws {
        let signature = SenderStamp.signature(user: "42", topic: "chat-in/r1", payload: payload, key: key)
        let otherKey = try SenderStampKey(bytes: Array(repeating: 8, count: 32))
        #expect(verified(user: "42", signature: nil) == nil, "unsigned")
        #expect(verified(user: nil, signature: signature) == nil, "no user")
        #expect(verified(user: "43", signature: signature) == nil, "another user")
        #expect(verified(user: "42", signature: signature, topic: "chat-in/r2") == nil, "another topic")
        #expect(verified(user: "42", signature: signature, payload: payload + [32]) == nil, "another payload")
        let forged = SenderStamp.signature(user: "42", topic: "chat-in/r1", payload: payload, key: otherKey)
        #expect(verified(user: "42", signature: forged) == nil, "another key")
        #expect(verified(user: "42", signature: signature.uppercased()) == nil, "not the plugin's form")
        #expect(verified(user: "42", signature: String(signature.dropLast(2))) == nil, "cut short")
        #expect(verified(user: "42", signature: "zz" + signature.dropFirst(2)) == nil, "not hex")
    }

    /// The bytes the plugin's C signs, HMAC-SHA256(key, `v1` NUL user NUL topic NUL
    /// SHA-256(payload)), computed apart from Parley (Python's `hmac`), so a change in how the
    /// fields are fed in cannot pass unseen. The key is hashed once per `SenderStampKey`: the
    /// second signature with the same key must not carry the first one's fields.
    @Test func theSignatureIsTheDocumentedHMAC() {
        #expect(
            SenderStamp.signature(user: "42", topic: "chat-in/r1", payload: payload, key: key)
                == "6971e9b91b46cb3c9031e46e8f690aa4cb779c3a7600b45ca2406638a1463fc9")
        #expect(
            SenderStamp.signature(user: "žluťoučký", topic: "chat-in/r1/7", payload: [], key: key)
                == "57c1069419bdad1cb001230eb035d3d55b590ced2cf1a16fdcd4017033a9699b")
    }

    /// The hand-kept HMAC states against swift-crypto's `HMAC<SHA256>` over the same bytes:
    /// keys of 32 to 130 bytes (longer than SHA-256's 64-byte block ones are hashed first),
    /// users, topics and payloads of every length up to a few blocks.
    @Test func theSignatureIsSwiftCryptosHMACForEveryKeyLength() throws {
        var generator = SystemRandomNumberGenerator()
        for keyLength in [32, 33, 63, 64, 65, 100, 128, 130] {
            let keyBytes = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let key = try SenderStampKey(bytes: keyBytes)
            for length in [0, 1, 55, 56, 64, 119, 200] {
                let user = String((0..<(length % 20)).map { _ in "0123456789".randomElement(using: &generator)! })
                let topic = "chat-in/" + String(repeating: "r", count: length)
                let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let signed =
                    Array("v1".utf8) + [0] + Array(user.utf8) + [0] + Array(topic.utf8) + [0]
                    + Array(SHA256.hash(data: payload))
                let expected = Array(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: keyBytes)))
                    .map { String(format: "%02x", $0) }.joined()
                #expect(
                    SenderStamp.signature(user: user, topic: topic, payload: payload, key: key) == expected,
                    "key \(keyLength) bytes, fields \(length)")
            }
        }
    }

    /// Fields cannot run into each other: user `4` on `2/chat-in/r1` is not user `42`.
    @Test func fieldsAreSeparated() {
        let signature = SenderStamp.signature(user: "4", topic: "2chat-in/r1", payload: payload, key: key)
        #expect(verified(user: "42", signature: signature, topic: "chat-in/r1") == nil)
    }

    @Test func aKeyShorterThan32BytesIsRefused() {
        #expect(throws: (any Error).self) { try SenderStampKey(bytes: Array(repeating: 1, count: 31)) }
    }
}
