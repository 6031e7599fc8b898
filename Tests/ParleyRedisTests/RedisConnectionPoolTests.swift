import Foundation
import ParleyRedis
import ParleyTestSupport
import Testing

struct RedisConnectionPoolTests {
    func pool(_ services: TestServices? = nil, password: String? = nil) throws -> RedisConnectionPool {
        let services = try services ?? TestServices.shared()
        return RedisConnectionPool(configuration: services.redis(password: password), logger: .quiet)
    }

    func key() -> String { "test:\(UUID().uuidString)" }

    @Test func repliesOfEveryKind() async throws {
        let redis = try pool()
        let key = key()
        #expect(try await redis.send("SET", key, "value", "EX", "60") == .status("OK"))
        #expect(try await redis.send("GET", key).string == "value")
        #expect(try await redis.send("GET", key + ":missing") == .null)
        #expect(try await redis.send("INCR", key + ":n") == .integer(1))
        _ = try await redis.send("RPUSH", key + ":l", "a", "b")
        #expect(
            try await redis.send("LRANGE", key + ":l", "0", "-1")
                == .array([.bulk(Array("a".utf8)), .bulk(Array("b".utf8))]))
        _ = try await redis.send("DEL", key, key + ":n", key + ":l")
        await redis.close()
    }

    @Test func binaryValuesRoundTrip() async throws {
        let redis = try pool()
        let key = Array(key().utf8)
        let value: [UInt8] = [0, 1, 2, 0xFF, 0x0D, 0x0A, 0]
        try await redis.withConnection { connection in
            _ = try await connection.send(bytes: [Array("SET".utf8), key, value])
            #expect(try await connection.send(bytes: [Array("GET".utf8), key]) == .bulk(value))
            _ = try await connection.send(bytes: [Array("DEL".utf8), key])
        }
        await redis.close()
    }

    @Test func anErrorReplyIsThrownAndTheConnectionStaysUsable() async throws {
        let redis = try pool()
        let key = key()
        _ = try await redis.send("SET", key, "text")
        await #expect(throws: RedisError.self) { try await redis.send("INCR", key) }
        await #expect(throws: RedisError.self) { try await redis.send("NOSUCHCOMMAND") }
        #expect(try await redis.send("GET", key).string == "text")
        _ = try await redis.send("DEL", key)
        await redis.close()
    }

    @Test func manyConcurrentCommandsShareABoundedPool() async throws {
        let redis = try pool()
        let key = key()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { _ = try await redis.send("INCR", key) } }
            try await group.waitForAll()
        }
        #expect(try await redis.send("GET", key).integer == 200)
        _ = try await redis.send("DEL", key)
        await redis.close()
    }

    /// A caller waiting for a busy pool leaves when its task is cancelled (a client gone, a
    /// deadline passed), instead of holding its place until a connection comes back.
    @Test func aWaitingCallerCanBeCancelled() async throws {
        let redis = try pool()
        // Every connection leased and held (no command on it: a blocking read could meet the
        // connection's read timeout on a loaded machine).
        let holders = (0..<4).map { _ in
            Task { try await redis.withConnection { _ in try await Task.sleep(for: .seconds(3)) } }
        }
        try await Task.sleep(for: .milliseconds(300))
        let waiting = Task { try await redis.send("PING") }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(ContinuousClock.now - start < .seconds(1), "left the line at once, not when a connection came back")
        for holder in holders { _ = try? await holder.value }
        #expect(try await redis.send("PING") == .status("PONG"))
        await redis.close()
    }

    @Test func aWrongPasswordIsAnError() async throws {
        let redis = try pool(password: "wrong-password")
        let error = await #expect(throws: RedisError.self) { try await redis.send("PING") }
        guard case .server = error else {
            Issue.record("expected a server error, got \(String(describing: error))")
            return
        }
    }

    @Test func anUnreachableServerFailsFast() async throws {
        var configuration = try TestServices.shared().redis()
        configuration.port = 1
        let redis = RedisConnectionPool(configuration: configuration, logger: .quiet)
        let start = ContinuousClock.now
        await #expect(throws: RedisError.self) { try await redis.send("PING") }
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func survivesTheServerRestarting() async throws {
        let services = try await TestServices.makePrivate()
        defer { Task { try? await services.shutdown() } }
        let redis = try pool(services)
        let key = key()
        _ = try await redis.send("SET", key, "kept")

        try await services.stop("redis")
        await #expect(throws: RedisError.self) { try await redis.send("GET", key) }
        try await services.start("redis")

        // The broken connection is dropped; the next command opens a new one. Redis kept
        // the key in its append-only file.
        #expect(try await redis.send("GET", key).string == "kept")
        await redis.close()
    }
}
