import ParleyCore
import PostgresNIO
import Synchronization

/// Which rooms are small enough for their messages' receipts (``ParleyCore/MessageReceipts``),
/// each at the readers version it was found at: every change of who can read a room moves
/// that version (migration 0010), so an answer holds until the room's next message carries a
/// newer one. A busy room is asked about once, not once per message: by the relay for the
/// events it encodes, and by the API for the answers to its sends.
final class SmallRooms: Sendable {
    private let known = Mutex<[Int64: (version: Int64, small: Bool)]>([:])
    /// Rooms kept at most; past it the map starts over.
    let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    func answer(room: Int64, version: Int64) -> Bool? {
        known.withLock { known in known[room].flatMap { $0.version == version ? $0.small : nil } }
    }

    func keep(_ answers: [(room: Int64, version: Int64, small: Bool)]) {
        known.withLock { known in
            if known.count + answers.count > capacity { known.removeAll(keepingCapacity: true) }
            for answer in answers { known[answer.room] = (answer.version, answer.small) }
        }
    }

    /// Whether each room of `versions` (room → its readers version) is small: the answers
    /// kept at those versions, the rest from `ask` (given the rooms, it runs ``query(of:maxMembers:)``)
    /// and kept.
    func small(
        _ versions: [Int64: Int64], ask: ([Int64]) async throws -> [(Int64, Bool)]
    ) async throws -> [Int64: Bool] {
        var small: [Int64: Bool] = [:]
        var unknown: [Int64: Int64] = [:]
        for (room, version) in versions {
            if let answer = answer(room: room, version: version) {
                small[room] = answer
            } else {
                unknown[room] = version
            }
        }
        guard !unknown.isEmpty else { return small }
        let answers = try await ask(Array(unknown.keys))
        for (room, answer) in answers { small[room] = answer }
        keep(answers.map { (room: $0.0, version: unknown[$0.0] ?? 0, small: $0.1) })
        return small
    }

    /// Whether each of `rooms` has at most `maxMembers` members, one row per room.
    static func query(of rooms: [Int64], maxMembers: Int) -> PostgresQuery {
        """
        SELECT r.room, (SELECT count(*) <= \(maxMembers) FROM (
            \(unescaped: ReceiptRooms.members(upTo: maxMembers + 1))) members)
        FROM unnest(\(rooms)::bigint[]) AS r(room)
        """
    }
}
