import Observation

/// The room list as observable state: what a SwiftUI view reads, redrawn when a message, a read
/// or a room change moves it.
///
/// It follows ``ParleyClient/roomListChanges()`` for as long as it lives, across sign-outs and
/// sign-ins (signed out, the list is empty). On iOS 16 and macOS 13, where Observation is not,
/// an app reads ``ParleyClient/roomListChanges()`` itself.
///
/// ```swift
/// @State private var rooms = ParleyRoomList(client: client)
/// …
/// List(rooms.rooms) { room in RoomRow(room: room) }.badge(rooms.unreadCount)
/// ```
@available(macOS 14, iOS 17, *)
@MainActor
@Observable
public final class ParleyRoomList {
    /// Most recent first, each with its unread and mention counts.
    public private(set) var rooms: [ParleyRoom] = []

    /// Every room's unread messages together (an app's badge).
    public var unreadCount: Int { rooms.reduce(0) { $0 + $1.unreadCount } }

    public func room(_ id: Int) -> ParleyRoom? { rooms.first { $0.id == id } }

    /// Reads the client's lists; ended when this model goes away.
    @ObservationIgnored private let following: Task<Void, Never>

    public init(client: ParleyClient) {
        let (lists, input) = AsyncStream.makeStream(of: [ParleyRoom].self, bufferingPolicy: .bufferingNewest(1))
        following = Task {
            // Listening before the first read: a change between the two comes after it.
            let changes = await client.roomListChanges()
            input.yield(await client.roomList)
            for await list in changes { input.yield(list) }
            input.finish()
        }
        Task { [weak self] in
            for await list in lists { self?.rooms = list }
        }
    }

    deinit { following.cancel() }
}
