import Foundation
import Logging
import ParleyCore
import ParleyWorker
import Synchronization
import Testing

/// The push fan-out remembers who has no push token, with the tokens' version that finding
/// holds for: a room where nobody has a device asks nothing after its first message, and a
/// token registered since (a higher version, carried by the next message) is asked for at once.
struct TokenlessUsersTests {
    let logger = Logger(label: "test")

    /// A relay batch of new messages, each sent by `sender` at push tokens version `version`.
    func batch(_ messages: [(room: Int64, sender: Int64, version: Int64?)]) -> String {
        FanoutBatch.encode(
            messages.map { newMessageEntry(room: $0.room, event: "E", sender: $0.sender, tokens: $0.version) })
    }

    struct Fixture {
        let audience: FakeAudience
        let pushQueue = RecordingQueue()
        let handler: FanoutHandler

        init(rooms: [Int64: [Int64]], devices: Set<Int64>, logger: Logger) {
            audience = FakeAudience(devices: devices)
            handler = FanoutHandler(
                readers: FakeReaders(rooms), publisher: RecordingPublisher(), queue: RecordingQueue(),
                pushes: PushFanout(audience: audience, queue: pushQueue), logger: logger)
        }

        var asked: [[Int64: Set<Int64>]] { audience.recipientQueries.withLock { $0 } }
        func pushed() throws -> [Int64] {
            try pushQueue.jobs.map { try JSONCoding.decoder.decode(PushJob.self, from: Data($0.utf8)).userID }
        }
    }

    @Test func aRoomWhereNobodyHasADeviceAsksOnlyOnce() async throws {
        let fixture = Fixture(rooms: [1: [10, 11]], devices: [], logger: logger)
        try await fixture.handler.handle(batch([(1, 10, 5)]))
        try await fixture.handler.handle(batch([(1, 11, 5)]))
        // Each member was asked about once, as a recipient of the other's message.
        #expect(fixture.asked == [[1: [11]], [1: [10]]])
        for sender: Int64 in [10, 11, 10] { try await fixture.handler.handle(batch([(1, sender, 5)])) }
        #expect(fixture.asked.count == 2)
        #expect(try fixture.pushed().isEmpty)
    }

    @Test func aTokenRegisteredSinceIsAskedForWithTheNextMessage() async throws {
        let fixture = Fixture(rooms: [1: [10, 11]], devices: [], logger: logger)
        try await fixture.handler.handle(batch([(1, 10, 5)]))
        // 11 registers a device: the token's commit moves the version to 6.
        fixture.audience.devices.withLock { _ = $0.insert(11) }
        try await fixture.handler.handle(batch([(1, 10, 6)]))
        #expect(fixture.asked == [[1: [11]], [1: [11]]])
        #expect(try fixture.pushed() == [11])
        // A holder is always asked (for its devices and counts); a job of an older version
        // still uses what was found since.
        try await fixture.handler.handle(batch([(1, 10, 5), (1, 11, 6)]))
        #expect(fixture.asked.last == [1: [10, 11]])
        try await fixture.handler.handle(batch([(1, 11, 6)]))
        #expect(fixture.asked.count == 3)
    }

    @Test func jobsWithoutAVersionAlwaysAsk() async throws {
        let fixture = Fixture(rooms: [1: [10, 11], 2: [20, 21]], devices: [21], logger: logger)
        try await fixture.handler.handle(batch([(1, 10, nil), (2, 20, nil)]))
        try await fixture.handler.handle(batch([(1, 10, nil), (2, 20, nil)]))
        #expect(fixture.asked == [[1: [11], 2: [21]], [1: [11], 2: [21]]])
        #expect(try fixture.pushed() == [21, 21])
    }
}
