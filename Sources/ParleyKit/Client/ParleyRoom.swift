/// A room as the room list shows it, kept current from the room and notification topics.
public struct ParleyRoom: Sendable, Hashable, Identifiable {
    public var id: Int
    /// The room's topics' name (`chat-room/{uid}`, `chat-in/{uid}`).
    public var uid: String
    /// Nil for a two-party room: it is named by ``peerID``'s user.
    public var name: String?
    /// The other user of a two-party room.
    public var peerID: Int?
    public var archived: Bool
    /// The newest message's seq (0 while there is none).
    public var lastSeq: Int
    public var unreadCount: Int
    public var unreadMentionCount: Int
    /// The newest message this client has seen, if any.
    public var lastMessage: ParleyMessage?

    public init(_ room: Components.Schemas.Room) {
        id = room.id
        uid = room.uid
        name = room.name
        peerID = room.peer?.id
        archived = room.archived
        lastSeq = room.lastSeq
        unreadCount = room.unreadCount
        unreadMentionCount = room.unreadMentionCount
        lastMessage = room.latestMessages?.last.map(ParleyMessage.init)
    }

    /// Counts a new message: unread unless `me` wrote it or the list counted it already (its
    /// seq within the listed `lastSeq`), and the newest shown.
    mutating func count(_ message: ParleyMessage, me: Int) {
        if message.seq >= lastMessage?.seq ?? 0 { lastMessage = message }
        guard message.seq > lastSeq else { return }
        lastSeq = message.seq
        guard message.senderID != me else { return }
        unreadCount += 1
        if message.mentions.contains(me) { unreadMentionCount += 1 }
    }
}
