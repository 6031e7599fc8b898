import Foundation
import ParleyKit

let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)

func follow(_ room: ParleyRoom) async throws {
    let earlier = try await parley.history(in: room.id)
    ChatView.show(earlier)
    for await event in await parley.messages(in: room.id) {
        switch event {
        case .new(let message): ChatView.append(message)
        case .edited(let message): ChatView.replace(message)
        case .deleted(let id, _, _, _): ChatView.remove(id)
        case .typing(_, let userID, let creating): ChatView.typing(userID, creating)
        default: break
        }
    }
}
