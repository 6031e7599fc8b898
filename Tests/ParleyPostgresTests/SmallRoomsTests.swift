import Synchronization
import Testing

@testable import ParleyPostgres

/// A room's size for receipts is asked once per readers version, by the relay and by the
/// answers to REST sends alike.
struct SmallRoomsTests {
    @Test func aRoomIsAskedAboutOncePerReadersVersion() async throws {
        let rooms = SmallRooms()
        let asked = Mutex<[[Int64]]>([])
        func ask(_ rooms: [Int64]) -> [(Int64, Bool)] {
            asked.withLock { $0.append(rooms.sorted()) }
            return rooms.map { ($0, $0 != 2) }
        }
        #expect(try await rooms.small([1: 5, 2: 7], ask: ask) == [1: true, 2: false])
        #expect(try await rooms.small([1: 5, 2: 7], ask: ask) == [1: true, 2: false])
        #expect(asked.withLock { $0 } == [[1, 2]])
        // Who can read room 1 changed: its version moved, and it is asked about again alone.
        #expect(try await rooms.small([1: 6, 2: 7], ask: ask) == [1: true, 2: false])
        #expect(asked.withLock { $0 } == [[1, 2], [1]])
    }
}
