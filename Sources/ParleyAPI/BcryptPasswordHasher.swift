import HummingbirdBcrypt
import NIOPosix
import ParleyCore

/// bcrypt on NIO's blocking thread pool: hashing takes tens to hundreds of milliseconds and
/// must never run on an event loop.
public struct BcryptPasswordHasher: PasswordHasher {
    let cost: UInt8

    public init(cost: Int) { self.cost = UInt8(cost) }

    public func hash(_ password: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}
