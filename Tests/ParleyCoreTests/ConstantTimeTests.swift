import Testing

@testable import ParleyCore

/// Secrets are compared whole: equal only when every byte and the length agree, whichever
/// byte differs.
struct ConstantTimeTests {
    @Test func equalOnlyWhenEveryByteAndTheLengthAgree() {
        let secret = Array("s3cret-of-the-broker".utf8)
        #expect(ConstantTime.equal(secret, secret))
        #expect(ConstantTime.equal("s3cret-of-the-broker".utf8, secret))
        #expect(ConstantTime.equal([UInt8](), [UInt8]()))
        for index in secret.indices {
            var guess = secret
            guess[index] ^= 0x01
            #expect(!ConstantTime.equal(guess, secret), "byte \(index)")
        }
        #expect(!ConstantTime.equal(secret.dropLast(), secret))
        #expect(!ConstantTime.equal(secret + [0], secret))
        #expect(!ConstantTime.equal([UInt8](), secret))
    }
}
