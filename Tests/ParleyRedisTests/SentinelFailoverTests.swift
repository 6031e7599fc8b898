import Foundation
import ParleyRedis
import ParleyTestSupport
import Testing

/// Redis with Sentinel (`PARLEY_REDIS_SENTINELS`, `PARLEY_REDIS_WAIT_REPLICAS`): the primary is
/// killed, Sentinel promotes its replica, and the pool follows by itself; no job that counted
/// as queued before the kill is lost.
struct SentinelFailoverTests {
    /// Where a Sentinel says the primary is.
    func sentinelPrimaryPort(_ sentinel: Int) async throws -> Int? {
        let pool = RedisConnectionPool(
            configuration: RedisConfiguration(port: sentinel, maximumConnections: 1), logger: .quiet)
        defer { Task { await pool.close() } }
        let reply = try await pool.send("SENTINEL", "get-master-addr-by-name", "parley")
        return reply.array?.last?.string.flatMap(Int.init)
    }

    @Test func jobsQueuedBeforeTheFailoverAreOnThePromotedReplicaAndThePoolFollowsIt() async throws {
        let services = try await TestServices.makePrivate()
        do {
            var ports: [Int] = []
            for _ in 0..<4 { ports.append(try await PluginBroker.freePort()) }
            try await services.startSentinels(replicaPort: ports[0], sentinelPorts: Array(ports[1...]))
            var configuration = services.redis()
            configuration.sentinels = ports[1...].map { ("127.0.0.1", $0) }
            configuration.waitReplicas = 1
            let pool = RedisConnectionPool(configuration: configuration, logger: .quiet)
            let queue = RedisJobQueue(name: "failover-\(UUID().uuidString.prefix(8))", pool: pool)
            /// Enqueues until it counts as queued (the replica may still be syncing, the
            /// primary may be failing over); false when it never did.
            func enqueue(_ job: String) async -> Bool {
                for _ in 0..<150 {
                    if (try? await queue.enqueue(job)) != nil { return true }
                    try? await Task.sleep(for: .milliseconds(200))
                }
                return false
            }

            var queued: [String] = []
            for index in 0..<20 where await enqueue("before-\(index)") { queued.append("before-\(index)") }
            #expect(queued.count == 20)
            try await services.crash("redis")
            // The promoted replica has no replica of its own until the old primary comes back
            // (Sentinel makes it one): jobs wait to count as queued until then, none is lost.
            for _ in 0..<100 where try await sentinelPrimaryPort(ports[1]) != ports[0] {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await sentinelPrimaryPort(ports[1]) == ports[0])
            try await services.start("redis")
            #expect(await enqueue("after"), "the pool did not follow the failover")

            // The pool now talks to the promoted replica, which holds every job queued before.
            #expect(try await pool.send("ROLE").array?.first?.string == "master")
            let info = try await pool.send("INFO", "server").string ?? ""
            #expect(info.contains("tcp_port:\(ports[0])"))
            let entries = try await pool.send("XRANGE", queue.stream, "-", "+").array ?? []
            let jobs = entries.compactMap { $0.array?.last?.array?.last?.string }
            #expect(Set(queued + ["after"]).isSubset(of: Set(jobs)))
            await pool.close()
        } catch {
            try? await services.shutdown()
            throw error
        }
        try await services.shutdown()
    }
}
