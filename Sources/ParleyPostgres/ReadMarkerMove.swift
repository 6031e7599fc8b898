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

    /// CTEs named `moves`, `moved` and `first_marker` that move the markers `moves` names (a query of
    /// `chat_room_id, user_account_id, message_id, seq`, one row per marker), for a statement
    /// that moves markers which mostly exist already (a send's): those are updated, behind ones
    /// only, and only a marker not there yet is inserted. An upsert of an existing marker also
    /// locks its row first, a WAL record of its own on every message.
    static func ctes(of moves: String) -> String {
        """
        moves AS (\(moves)), moved AS (
            UPDATE messenger.read_marker r
            SET message_id = x.message_id, seq = x.seq, updated_at = clock_timestamp()
            FROM moves x
            WHERE r.chat_room_id = x.chat_room_id AND r.user_account_id = x.user_account_id AND r.seq < x.seq
        ), first_marker AS (
            INSERT INTO messenger.read_marker (chat_room_id, user_account_id, message_id, seq)
            SELECT x.chat_room_id, x.user_account_id, x.message_id, x.seq FROM moves x
            WHERE NOT EXISTS (
                SELECT 1 FROM messenger.read_marker r
                WHERE r.chat_room_id = x.chat_room_id AND r.user_account_id = x.user_account_id)
            \(forwardOnly)
        )
        """
    }
}
