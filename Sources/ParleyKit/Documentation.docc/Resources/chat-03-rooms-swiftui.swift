import ParleyKit
import SwiftUI

/// The room list in SwiftUI (iOS 17, macOS 14): redrawn when a message, a read or a room
/// change moves it.
struct RoomsView: View {
    @State private var rooms: ParleyRoomList

    init(parley: ParleyClient) {
        _rooms = State(initialValue: ParleyRoomList(client: parley))
    }

    var body: some View {
        List(rooms.rooms) { room in
            Text(room.name ?? "Direct chat").badge(room.unreadCount)
        }
        .navigationTitle("Chats (\(rooms.unreadCount))")
    }
}
