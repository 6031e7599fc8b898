import Foundation
import ParleyKit

let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)

func showRooms() async {
    for room in await parley.roomList {
        print(room.name ?? "with user \(room.peerID ?? 0)", room.unreadCount)
    }
    for await rooms in await parley.roomListChanges() {
        RoomListView.update(rooms)
    }
}
