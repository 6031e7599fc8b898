import Foundation
import HummingbirdTesting
import ParleyCore
import ParleyMQTT
import ParleyTestSupport
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

@testable import ParleyAPI
@testable import ParleyPostgres

/// Sends stored beside the relay of their own process wake it directly while it holds the
/// lock, and send no `NOTIFY`; beside a relay that does not hold it they notify as before.
struct LocalRelayTests {
    @Test func aSendBesideAnActiveRelayWakesItInsteadOfNotifying() async throws {
        try await SendBatchTests().withRoom { room in
            let local = LocalRelay()
            let repository = PostgresMessageRepository(
                database: room.harness.database, logger: .quiet, fileLinks: .testing, localRelay: local)
            let listened = Listened()
            let listener = Task {
                try await room.harness.database.client.withConnection { connection in
                    try await connection.listen(on: Outbox.channel) { sequence in
                        listened.listening.store(true, ordering: .sequentiallyConsistent)
                        for try await _ in sequence { listened.notifications.add(1, ordering: .sequentiallyConsistent) }
                    }
                }
            }
            defer { listener.cancel() }
            for _ in 0..<500 where !listened.listening.load(ordering: .sequentiallyConsistent) {
                try await Task.sleep(for: .milliseconds(10))
            }
            func notified(_ count: Int) async throws -> Bool {
                for _ in 0..<500 where listened.notifications.load(ordering: .sequentiallyConsistent) < count {
                    try await Task.sleep(for: .milliseconds(10))
                }
                return listened.notifications.load(ordering: .sequentiallyConsistent) == count
            }

            // Not active: the commit notifies whichever relay holds the lock.
            _ = try await repository.sendIfAllowed(batch: [try room.send(room.writer, "inactive")], minimum: .writer)
            #expect(try await notified(1))

            // Active: a batch of one and a batch of two (the statement's two shapes) wake it.
            local.activated(true)
            for batch in [["one"], ["two", "three"]] {
                let sent = try await repository.sendIfAllowed(
                    batch: try batch.map { try room.send(room.writer, $0) }, minimum: .writer)
                #expect(sent.allSatisfy { $0?.created == true })
                let started = ContinuousClock.now
                await local.wake.wait(upTo: .seconds(10))
                #expect(ContinuousClock.now - started < .seconds(5), "the relay was not woken")
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(
                listened.notifications.load(ordering: .sequentiallyConsistent) == 1, "a send beside the relay notified")

            // Let go: notifying again.
            local.activated(false)
            _ = try await repository.sendIfAllowed(batch: [try room.send(room.writer, "let-go")], minimum: .writer)
            #expect(try await notified(2))
            #expect(try await room.storedSeqs() == [1, 2, 3, 4, 5, 6])
        }
    }

    @Test func theRelayIsActiveWhileItHoldsTheLockAndPublishesWhatItsProcessStored() async throws {
        let fixture = try await RelayFixture.make()
        let local = LocalRelay()
        try await fixture.withRelay(beside: local) { roomID, users in
            let repository = PostgresMessageRepository(
                database: fixture.harness.database, logger: .quiet, fileLinks: .testing, localRelay: local)
            let sent = try await repository.sendIfAllowed(
                batch: [
                    MessageSubmission(
                        roomID: Int64(roomID), senderID: userID(users[1]),
                        message: try NewMessage(content: "hi", uid: "local"))
                ], minimum: .writer)
            #expect(sent.first??.created == true)
            #expect(await fixture.published(uid: "local"), "the relay did not publish the send stored beside it")
        }
    }
}

/// The messages a send hands the relay of its process are those the relay would read back, and
/// a row whose message was not handed over (another process's, its `NOTIFY` still on the way)
/// is read in full and published all the same.
struct RelayHandOverEndToEndTests {
    @Test func theMessagesHandedOverAreThoseTheRelayWouldReadBack() async throws {
        try await SendBatchTests().withRoom { room in
            let local = LocalRelay()
            local.activated(true)
            _ = local.mayReadRowsOnly()
            let repository = PostgresMessageRepository(
                database: room.harness.database, logger: .quiet, fileLinks: .testing, localRelay: local)
            for batch in [["one"], ["two", "three"]] {
                let sent = try await repository.sendIfAllowed(
                    batch: try batch.map { try room.send(room.writer, $0, "text of \($0)") }, minimum: .writer)
                let ids = sent.compactMap { $0?.message.id }
                #expect(ids.count == batch.count)
                let full = try await room.harness.database.client.withConnection { connection in
                    try await connection.execute(
                        OutboxReadStatement(batch: .init(limit: 100, published: [], links: .testing)), logger: .quiet
                    ).allRows()
                }.compactMap(\.newMessage?.message).filter { ids.contains($0.id) }
                let (count, handed) = local.take(leading: ids)
                #expect(count == ids.count)
                #expect(full.count == ids.count)
                for message in full { #expect(handed[message.id] == message) }
                // The rows read without their messages, given these, are the rows read in full.
                let rows = try await room.harness.database.client.withConnection { connection in
                    try await connection.execute(
                        OutboxRowsReadStatement(
                            rows: .init(batch: .init(limit: 100, published: [], links: .testing))), logger: .quiet
                    ).allRows()
                }.filter { $0.awaiting.map { ids.contains($0.messageID) } == true }
                let received = rows.map { row in row.receiving(handed[row.awaiting!.messageID]!) }
                #expect(received.map { $0.newMessage?.message } == full.map { $0 })
                #expect(received.map { $0.newMessage?.topic } == received.map { _ in Topic.room(room.uid) })
            }
        }
    }

    @Test func aRowWhoseMessageWasNotHandedOverIsReadInFullAndPublished() async throws {
        let fixture = try await RelayFixture.make()
        let local = LocalRelay()
        try await fixture.withRelay(beside: local) { roomID, users in
            func send(_ uid: String, by repository: PostgresMessageRepository) async throws {
                let sent = try await repository.sendIfAllowed(
                    batch: [
                        MessageSubmission(
                            roomID: Int64(roomID), senderID: userID(users[1]),
                            message: try NewMessage(content: "hi", uid: uid))
                    ], minimum: .writer)
                #expect(sent.first??.created == true)
            }
            let here = PostgresMessageRepository(
                database: fixture.harness.database, logger: .quiet, fileLinks: .testing, localRelay: local)
            try await send("here", by: here)
            #expect(await fixture.published(uid: "here"))
            // Another process whose own relay counts as active: it neither notifies nor hands
            // this relay anything, so the row's message is read back.
            let elsewhere = LocalRelay()
            elsewhere.activated(true)
            let there = PostgresMessageRepository(
                database: fixture.harness.database, logger: .quiet, fileLinks: .testing, localRelay: elsewhere)
            try await send("there", by: there)
            #expect(await fixture.published(uid: "there"), "a row whose message was not handed over was not published")
            try await send("here-again", by: here)
            #expect(await fixture.published(uid: "here-again"))
        }
    }
}

extension RelayFixture {
    /// Runs `body` while a relay beside `local` holds the lock, with a room of three whose topic
    /// the subscriber follows (`body` gets its id and users); then stops the relay, which must
    /// let `local` know, and the fixture.
    func withRelay(
        beside local: LocalRelay,
        _ body: @escaping @Sendable (_ roomID: Int, _ users: [LoginResponse]) async throws -> Void
    ) async throws {
        let relay = OutboxRelay(
            database: harness.database, publisher: client, fanout: queue, fileLinks: APIHarness.fileLinks,
            logger: .quiet, local: local)
        try await harness.run { api in
            let (roomID, users) = try await api.roomOfThree()
            let room = try await api.decoded(RoomResponse.self, .get, "/v1/rooms/\(roomID)", token: token(users[0]))
            try await subscriber.subscribe(Topic.room(room.uid))
            let group = ServiceGroup(configuration: .init(services: [.init(service: relay)], logger: .quiet))
            let running = Task { try await group.run() }
            for _ in 0..<500 where !local.isActive { try await Task.sleep(for: .milliseconds(10)) }
            #expect(local.isActive)
            var failure: (any Error)?
            do { try await body(roomID, users) } catch { failure = error }
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(!local.isActive, "a relay that let go of its lock still counted as active")
            if let failure { throw failure }
        }
        await shutdown()
    }

    /// Whether the subscriber gets an event carrying the message of `uid` within 10 s.
    func published(uid: String) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard let message = await MessageInbox.of(subscriber).next(within: .seconds(1)) else { continue }
            if String(decoding: message.payload, as: UTF8.self).contains(#""uid":"\#(uid)""#) { return true }
        }
        return false
    }
}

/// What a listening connection heard.
private final class Listened: Sendable {
    let listening = Atomic<Bool>(false)
    let notifications = Atomic<Int>(0)
}
