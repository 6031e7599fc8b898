import Foundation
import ParleyCore
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import PostgresNIO
import Testing

/// `parley worker --roles maintenance` killed while it erases a deleted account: another worker
/// finishes the erasure, and running steps twice does no harm.
struct MaintenanceWorkerRecoveryTests {
    @Test func aKilledWorkerLeavesTheErasureToTheNext() async throws {
        let services = try TestServices.shared()
        let configuration = try await services.makeDatabase(migrated: true)
        let database = PostgresPool(configuration: configuration, logger: .quiet)
        try await database.withRunningClient { _ in
            // An account with 3,000 messages in a room of three, deleted.
            let messages = 3_000
            let userID = try await database.client.query(
                """
                WITH u AS (
                    INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
                    SELECT 'kill-' || n || '-' || gen_random_uuid() || '@example.com', 'K', 'U', 'x'
                    FROM generate_series(1, 3) n RETURNING id
                ), r AS (
                    INSERT INTO messenger.chat_room (uid, type, name, topic, last_seq)
                    SELECT u, 'multiparty', 'Kill', 'chat-room/' || u, \(messages)
                    FROM (SELECT replace(gen_random_uuid()::text, '-', '') AS u) x RETURNING id
                ), m AS (
                    INSERT INTO messenger.chat_room_to_user_account (chat_room_id, user_account_id, role_id)
                    SELECT r.id, u.id, (SELECT id FROM cloud.role WHERE code = 'writer') FROM r, u RETURNING user_account_id
                )
                SELECT min(user_account_id) FROM m
                """, logger: .quiet
            ).single(Int64.self)
            try await database.client.query(
                """
                INSERT INTO messenger.message (chat_room_id, seq, sent_by_id, uid, content)
                SELECT m.chat_room_id, n, \(userID), 'k-' || n, 'words ' || n
                FROM generate_series(1, \(messages)) n,
                     (SELECT chat_room_id FROM messenger.chat_room_to_user_account WHERE user_account_id = \(userID)) m
                """, logger: .quiet)
            let erasure = PostgresErasureRepository(
                rooms: PostgresRoomRepository(database: database, logger: .quiet, fileLinks: .testing))
            #expect(try await erasure.endAccount(userID: userID))
            let redis = RedisConnectionPool(configuration: services.redis(), logger: .quiet)
            try await RedisJobQueue(name: "maintenance", pool: redis).enqueue(
                MaintenanceJob(.eraseAccount, id: userID).json())

            func tombstones() async throws -> Int {
                try await database.client.query(
                    "SELECT count(*) FROM messenger.message WHERE sent_by_id = \(userID) AND deleted_at IS NOT NULL",
                    logger: .quiet
                ).single(Int.self)
            }
            var parley = ParleyCommand(database: configuration, services: services)
            // What the killed worker held is claimed by the next after this.
            parley = ParleyCommand(
                environment: parley.environment.merging(["PARLEY_JOBS_VISIBILITY_TIMEOUT": "2"]) { $1 })
            let stack = try await LiveStack.start(parley, serve: false, workerRoles: ["maintenance"])
            try await stack.stopping {
                let first = try #require(stack.worker)
                try await waitWhileMoving(progress: tombstones, stall: .seconds(30)) { try await tombstones() >= 300 }
                await first.kill()
                let atKill = try await tombstones()
                #expect(atKill >= 300, "the first worker did too little: \(first.log)")
                #expect(atKill < messages, "the first worker finished before it was killed; the test proved nothing")

                let second = try await stack.startWorker("second-worker", roles: ["maintenance"])
                func erased() async throws -> Bool {
                    try await database.client.query(
                        "SELECT erased_at IS NOT NULL FROM cloud.user_account WHERE id = \(userID)", logger: .quiet
                    ).single(Bool.self)
                }
                // 5 s alone, and a message at a time it took over a minute beside the rest of the
                // suite on two cores: the wait ends when the work stops moving, not at a set time
                // (30 s without a tombstone: the second worker starts and reclaims the job first).
                try await waitWhileMoving(progress: tombstones, stall: .seconds(30)) { try await erased() }
                #expect(await second.stop() == 0)
                let left = messages - (try await tombstones())
                #expect(try await erased(), "\(left) messages left: \(first.log)\n\(second.log)")
                #expect(left == 0)
            }
            let members = try await database.client.query(
                "SELECT count(*) FROM messenger.chat_room_to_user_account WHERE user_account_id = \(userID)",
                logger: .quiet
            ).single(Int.self)
            #expect(members == 0)
        }
    }

    /// Polls until `done`, for as long as `progress` rises at least once per `stall` (and
    /// 5 minutes at most), so a slow machine gets the time it needs and a stuck worker fails.
    private func waitWhileMoving(
        progress: () async throws -> Int, stall: Duration, done: () async throws -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(300))
        var last = try await progress()
        var lastMove = clock.now
        while clock.now < end, clock.now - lastMove < stall, try await !done() {
            try await Task.sleep(for: .milliseconds(50))
            let now = try await progress()
            if now != last { (last, lastMove) = (now, clock.now) }
        }
    }
}
