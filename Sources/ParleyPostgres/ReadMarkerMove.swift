/// The one rule of a read marker's move, for every statement that moves one (a send moves its
/// sender's, a reader moves their own): a marker moves forward only.
enum ReadMarkerMove {
    /// The tail of an `INSERT INTO messenger.read_marker`: a new marker is written, an
    /// existing one only when it is behind.
    static let forwardOnly = """
        ON CONFLICT (chat_room_id, user_account_id) DO UPDATE
        SET message_id = excluded.message_id, seq = excluded.seq, updated_at = clock_timestamp()
        WHERE messenger.read_marker.seq < excluded.seq
        """
}
