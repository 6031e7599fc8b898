import Foundation
import ParleyKit

let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)

func send(_ text: String, in room: ParleyRoom) async throws {
    let outgoing = try await parley.send(text, in: room.id)
    ChatView.showPending(outgoing)
    do {
        let stored = try await outgoing.stored()
        ChatView.confirm(outgoing.uid, as: stored)
    } catch let refusal as ParleyRejection {
        ChatView.fail(outgoing.uid, refusal.reason)
    }
}
