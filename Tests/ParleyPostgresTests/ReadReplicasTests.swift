import Foundation
import ParleyCore
import ParleyTestSupport
import PostgresNIO
import Testing

@testable import ParleyPostgres

/// WAL positions as PostgreSQL writes them, and what a read does when its replica is gone.
struct ReadReplicasTests {
    @Test func walPositionsCompareAsNumbers() {
        #expect(ReadReplicas.lsn("0/16B3748") == 0x16B_3748)
        #expect(ReadReplicas.lsn("1/0") == 1 << 32)
        #expect(ReadReplicas.lsn("1/0")! > ReadReplicas.lsn("0/FFFFFFFF")!)
        for bad in ["", "16B3748", "0/", "x/1", "0/1/2"] { #expect(ReadReplicas.lsn(bad) == nil, "\(bad)") }
    }

    /// A replica that died before the monitor noticed: the read is answered by the primary,
    /// within the replica's answer bound, and the replica is skipped from then on.
    @Test func aReadOnAReplicaThatIsGoneIsAnsweredByThePrimary() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        var gone = configuration
        gone.port = try Self.closedPort()
        let replicas = ReadReplicas(configurations: [gone], maxLag: .seconds(5), logger: .quiet)
        let pool = PostgresPool(configuration: configuration, logger: .quiet, replicas: replicas)
        try await pool.withRunningClient { pool in
            try await withThrowingDiscardingTaskGroup { group in
                // The replica's pool without the monitor, which would soon skip it.
                group.addTask { await replicas.replicas[0].run() }
                defer { group.cancelAll() }
                replicas.assumeCurrent()
                try await ReplicaReads.$allowed.withValue(true) {
                    #expect(pool.reads.replica != nil)
                    let started = ContinuousClock.now
                    let answer = try await pool.reads.query("SELECT pg_is_in_recovery()", logger: .quiet)
                        .first(Bool.self)
                    #expect(answer == false)
                    // The timeout and the primary's answer, with room for a loaded machine (a CI run
                    // took 3.02 s against a 3 s bound); a read that waited for the gone replica
                    // would take far longer.
                    #expect(ContinuousClock.now - started < ReadReplicas.answerTimeout + .seconds(3))
                    #expect(pool.reads.replica == nil)
                }
            }
        }
    }

    /// Only the replica's own failures send a read to the primary; a statement's own error
    /// would fail there too, and the replica is not to blame for it.
    @Test func onlyTheReplicasOwnFailuresAreRetriedOnThePrimary() {
        #expect(StaleReads.isReplicasOwn(ConnectionLostError(description: "no answer")))
        #expect(!StaleReads.isReplicasOwn(CancellationError()))
        #expect(!StaleReads.isReplicasOwn(POSIXError(.EINVAL)))
    }

    /// A port nothing listens on: bound, then closed.
    static func closedPort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
