/// How a message search reads `messenger.message_search` (migration 0020), chosen per query
/// from how many messages the caller's rooms hold: PostgreSQL's own choice, made once per
/// statement for any caller (Parley's connections force generic plans), would be wrong for one
/// of them. See the *Search in PostgreSQL* article for the measurements behind the bounds.
enum MessageSearchShape: Equatable, Sendable {
    /// The caller's rooms' rows, each matched against the query: bounded by those rooms' size,
    /// whatever the words.
    case rooms
    /// The newest `window` ids of all rooms, read newest first until a page is full (a common
    /// word stops early); then, for older messages, the word index (a rare word's few entries).
    case newest(window: Int64)

    /// Up to this many messages in the caller's rooms, reading them all is cheaper than the
    /// word index: about 20 ms per 100,000 rows.
    static let roomRowsLimit: Int64 = 100_000
    /// The window holds about this many messages of the caller's rooms.
    static let windowRows: Int64 = 20_000

    /// - Parameters:
    ///   - roomRows: the messages ever stored in the caller's rooms (their `last_seq`s).
    ///   - newestID: the newest message's id, roughly the count of all messages.
    static func choose(roomRows: Int64, newestID: Int64) -> Self {
        guard roomRows > roomRowsLimit else { return .rooms }
        // The caller's share of all messages sets how far back `windowRows` of theirs reach;
        // a window wider than the caller's rooms would read more than the rooms themselves.
        let share = Double(roomRows) / Double(max(newestID, roomRows))
        let window = max(windowRows, Int64((Double(windowRows) / share).rounded(.up)))
        return window < roomRows ? .newest(window: window) : .rooms
    }
}
