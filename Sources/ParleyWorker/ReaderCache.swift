import Synchronization

/// Rooms' readers as the fan-out last read them, with the version they were read at, so that
/// a room's next messages reach the same readers without a query (see
/// ``ParleyCore/FanoutJob/readersVersion``).
///
/// An entry answers a job whose version is at most its own: every change of who can read a
/// room commits a higher version, and the relay reads the version with each message, so a
/// message committed after a member was removed never uses readers read before it. Only whole
/// rooms (a first chunk that was not full) are kept, up to `capacity` reader ids in all; when
/// that is reached the cache starts again empty, which costs one query per room.
final class ReaderCache: Sendable {
    private struct Entry {
        let version: Int64
        let readers: [Int64]
    }
    private struct State {
        var entries: [Int64: Entry] = [:]
        var held = 0
    }
    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int = 1_000_000) {
        self.capacity = capacity
    }

    /// The readers of `roomID` if they were read at `version` or later.
    func readers(of roomID: Int64, atLeast version: Int64) -> [Int64]? {
        state.withLock { state in
            guard let entry = state.entries[roomID], entry.version >= version else { return nil }
            return entry.readers
        }
    }

    /// Keeps `readers` as the whole room's at `version`, unless a later version is kept.
    func store(roomID: Int64, version: Int64, readers: [Int64]) {
        state.withLock { state in
            if let kept = state.entries[roomID] {
                guard kept.version < version else { return }
                state.held -= kept.readers.count
            }
            if state.held + readers.count > capacity {
                state.entries = [:]
                state.held = 0
            }
            state.entries[roomID] = Entry(version: version, readers: readers)
            state.held += readers.count
        }
    }
}
