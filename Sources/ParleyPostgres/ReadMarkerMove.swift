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

    /// CTEs named `moves` and `moved` that move the markers `moves` names (a query of
    /// `chat_room_id, user_account_id, message_id, seq`, one row per marker), for a statement that
    /// moves markers which mostly exist already (a send's): one upsert, which inserts a marker not
    /// there yet and moves a behind one. It locks an existing marker's row before updating it (a
    /// WAL record of its own), yet costs less than an update beside an insert of the missing
    /// ones, whose second write to the table and second probe of each marker PostgreSQL sets up
    /// and runs on every send (<doc:MessagePipelinePerformance>).
    static func ctes(of moves: String) -> String {
        """
        moves AS (\(moves)), moved AS (
            INSERT INTO messenger.read_marker (chat_room_id, user_account_id, message_id, seq)
            SELECT x.chat_room_id, x.user_account_id, x.message_id, x.seq FROM moves x
            \(forwardOnly)
        )
        """
    }
}
