/// Whether a room is small enough for receipts is read one way: its distinct members, at most
/// one past the limit, so a large room costs no more than a small one.
enum ReceiptRooms {
    /// The members (`member`) of the room `r.room`, at most `limit` of them; the limit is an
    /// integer the caller passes from its configuration, never a client's input.
    static func members(upTo limit: Int) -> String {
        "SELECT DISTINCT user_account_id AS member FROM messenger.room_membership WHERE chat_room_id = r.room LIMIT \(limit)"
    }
}
