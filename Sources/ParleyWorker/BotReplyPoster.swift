import ParleyCore

/// Says a bot's answer in the room as the bot: a member's send (its role, the room's state, the
/// message hook), without the user's message budget (the commands it answers spent theirs).
public struct BotReplyPoster: BotReplies {
    let rooms: RoomService

    public init(rooms: RoomService) { self.rooms = rooms }

    public func post(_ message: NewMessage, as botID: Int64, in roomID: Int64) async throws {
        _ = try await rooms.send(roomID: roomID, message: message, by: botID, budgeted: false)
    }
}
