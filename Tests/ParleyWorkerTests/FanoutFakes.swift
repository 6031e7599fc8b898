import Foundation
import ParleyCore
import Synchronization

/// Room readers held in memory, each room at a readers version (0 until changed); counts the
/// queries asked of it.
final class FakeReaders: RoomReaders {
    let rooms: Mutex<[Int64: [Int64]]>
    let versions = Mutex<[Int64: Int64]>([:])
    let asked = Mutex<[Set<ReaderChunk>]>([])

    init(_ rooms: [Int64: [Int64]]) { self.rooms = Mutex(rooms) }

    /// Changes a room's readers as a membership change commits: at a higher version.
    func change(_ roomID: Int64, to readers: [Int64]) {
        rooms.withLock { $0[roomID] = readers }
        versions.withLock { $0[roomID, default: 0] += 1 }
    }

    func version(of roomID: Int64) -> Int64 { versions.withLock { $0[roomID] ?? 0 } }

    func readerIDs(of chunks: Set<ReaderChunk>, limit: Int) async throws -> ChunkReaders {
        asked.withLock { $0.append(chunks) }
        let rooms = rooms.withLock { $0 }
        var readers = ChunkReaders()
        for chunk in chunks {
            let ids = Array((rooms[chunk.roomID] ?? []).sorted().filter { $0 > chunk.after }.prefix(limit))
            guard !ids.isEmpty else { continue }
            readers.ids[chunk] = ids
            readers.versions[chunk.roomID] = version(of: chunk.roomID)
        }
        return readers
    }
}

/// Records what would go to the broker, one entry per batch.
final class RecordingPublisher: EventPublisher {
    let batches = Mutex<[[String]]>([])

    var copies: [String] { batches.withLock { $0.flatMap { $0 } } }

    func publish(topic: String, payload: String) async throws {
        batches.withLock { $0.append(["\(topic) \(payload)"]) }
    }

    func publishTransient(topic: String, payload: String) async throws {
        try await publish(topic: topic, payload: payload)
    }

    func publish(events: [(topic: String, payload: String)]) async throws {
        batches.withLock { $0.append(events.map { "\($0.topic) \($0.payload)" }) }
    }
}

/// Records what would be queued, one entry per round trip.
final class RecordingQueue: JobQueue {
    let rounds = Mutex<[[String]]>([])

    var jobs: [String] { rounds.withLock { $0.flatMap { $0 } } }

    func enqueue(_ job: String) async throws { rounds.withLock { $0.append([job]) } }

    func enqueue(contentsOf jobs: [String]) async throws { rounds.withLock { $0.append(jobs) } }
}

/// Devices and room names held in memory; counts the queries asked of it, and can fail.
final class FakeAudience: PushAudience {
    /// Users with a device (device id = user id × 10); a test may register more.
    let devices: Mutex<Set<Int64>>
    let failing = Mutex(false)
    let recipientQueries = Mutex<[[Int64: Set<Int64>]]>([])
    let contextQueries = Mutex<[Set<RoomUser>]>([])
    /// Blocks the audience knows of.
    let blocks = Mutex<Set<UserBlock>>([])

    init(devices: Set<Int64>) { self.devices = Mutex(devices) }

    func recipients(in rooms: [Int64: Set<Int64>]) async throws -> [Int64: [PushRecipient]] {
        if failing.withLock({ $0 }) { throw FakeFailure() }
        recipientQueries.withLock { $0.append(rooms) }
        let devices = devices.withLock { $0 }
        var found: [Int64: [PushRecipient]] = [:]
        for (room, users) in rooms {
            let pushed = users.filter(devices.contains).sorted().map { user in
                PushRecipient(
                    userID: user, deviceID: user * 10, provider: .webhook, token: "token-\(user)",
                    room: RoomNotificationSettings(), quietHours: nil, unread: 1)
            }
            if !pushed.isEmpty { found[room] = pushed }
        }
        return found
    }

    func blocks(among pairs: Set<UserBlock>) async throws -> Set<UserBlock> {
        blocks.withLock { pairs.intersection($0) }
    }

    func contexts(of rooms: Set<RoomUser>) async throws -> [RoomUser: PushRoomContext] {
        contextQueries.withLock { $0.append(rooms) }
        var contexts: [RoomUser: PushRoomContext] = [:]
        for room in rooms {
            contexts[room] = PushRoomContext(
                roomUID: "room-\(room.roomID)", roomName: "Room \(room.roomID)", twoParty: false, actorName: "Ann")
        }
        return contexts
    }
}

struct FakeFailure: Error {}

/// A new message's fan-out entry as the relay makes it: its event beside a job by `sender`
/// at the given versions (nil: none carried).
func newMessageEntry(
    room: Int64, event: String, sender: Int64 = 10, readers: Int64? = nil, tokens: Int64? = nil
) -> FanoutBatch.Entry {
    FanoutBatch.Entry(
        FanoutJob(
            roomID: room, event: "", audience: .readers,
            push: PushIntent(reason: .message, actorID: sender, content: "hi"), readersVersion: readers,
            pushTokensVersion: tokens),
        event: event)
}
