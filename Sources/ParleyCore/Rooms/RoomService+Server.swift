import Foundation

/// What the app's server does in rooms through the server API (`/v1/server/*`): it knows its
/// rooms and acts with a key's budget, not a member's.
extension RoomService {
    /// The app's server sending as its user: the user's rights, the key's budget (not the
    /// user's). The server knows its rooms, so a user who is no member is forbidden there, not
    /// told the room does not exist.
    public func send(asServerFor userID: Int64, roomID: Int64, message: NewMessage) async throws -> (
        message: Message, created: Bool
    ) {
        do {
            return try await send(roomID: roomID, message: message, by: userID, budgeted: false)
        } catch let error as ParleyError where error.code == .notFound {
            guard try await rooms.roomExists(id: roomID) else { throw error }
            throw ParleyError(.forbidden, "The user is not a member of the room.")
        }
    }

    /// A room notice of the app's server (`sentBy: "system"`), in any room: no sender, so no
    /// role, block or user budget applies. The same uid again answers the stored notice.
    public func postNotice(roomID: Int64, message: NewMessage) async throws -> (message: Message, created: Bool) {
        precondition(message.type == .system, "a notice is a system message")
        let submission = MessageSubmission.notice(
            roomID: roomID, message: message, traceparent: PipelineTrace.current())
        let sent = try await messages.send(batch: [submission])[0].get()
        return (sent.message, sent.created)
    }

    /// History as the app's server sees it (`GET /v1/server/rooms/{id}/messages`): every
    /// message of the room, reactions without `me`.
    public func serverHistory(roomID: Int64, query: HistoryQuery) async throws -> (
        messages: [Message], hasMore: Bool
    ) {
        let page = try await messages.messages(roomID: roomID, query: query, viewer: nil)
        if page.messages.isEmpty, try await !rooms.roomExists(id: roomID) {
            throw ParleyError.notFound("No such room.")
        }
        return page
    }
}
