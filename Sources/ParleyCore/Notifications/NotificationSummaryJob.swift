/// Work for the `fanout` role: the summaries rooms' members are due at the end of a busy
/// window (``NotificationWindows``), one line per chunk of a room's readers:
///
///     notification-summary\n
///     <room id>:<after user id>\n   (once per chunk)
///
/// A room's first chunk starts after user 0; a room with more readers than a job's chunk
/// queues the rest as a job of its own. The relay parks a room's job as a backstop when its
/// window first holds a message and, when the window ends, releases the jobs of every room
/// due together as one (``ParkedJobs/release(_:joinedAfter:)``): jobs of this shape join by
/// their lines.
public struct NotificationSummaryJob: Sendable, Equatable {
    public static let marker = "notification-summary\n"

    public let chunks: [ReaderChunk]

    public init(chunks: [ReaderChunk]) {
        self.chunks = chunks
    }

    /// The job of `room`'s first chunk: what the relay parks for it.
    public init(room: Int64) {
        self.init(chunks: [ReaderChunk(roomID: room, after: 0)])
    }

    public var payload: String {
        Self.marker + chunks.map { "\($0.roomID):\($0.after)\n" }.joined()
    }

    /// The job in a queue entry; nil when the entry is not one (a fan-out job or batch).
    public init?(payload: String) throws {
        guard payload.hasPrefix(Self.marker) else { return nil }
        var chunks: [ReaderChunk] = []
        for line in payload.dropFirst(Self.marker.count).split(separator: "\n") {
            let parts = line.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let room = Int64(parts[0]), let after = Int64(parts[1]), room > 0, after >= 0
            else { throw FanoutBatchError() }
            chunks.append(ReaderChunk(roomID: room, after: after))
        }
        guard !chunks.isEmpty, chunks.count <= Self.maximumChunks else { throw FanoutBatchError() }
        self.chunks = chunks
    }

    /// More than any relay joins (one per room due at once), so a corrupt entry cannot make a
    /// read of every room.
    static let maximumChunks = 100_000
}

/// A window's summary for one member of a room: what the room-summary event carries.
public struct NotificationSummary: Codable, Sendable, Equatable {
    public let chatRoomId: Int64
    /// The room's newest message's seq when the summary was read.
    public let seq: Int64
    /// The room's newest message (its receipts left out); nil when retention purged it.
    public let message: Message?
    /// As the room list counts them for this member.
    public let unreadCount: Int64
    public let unreadMentionCount: Int64

    public init(chatRoomId: Int64, seq: Int64, message: Message?, unreadCount: Int64, unreadMentionCount: Int64) {
        self.chatRoomId = chatRoomId
        self.seq = seq
        self.message = message
        self.unreadCount = unreadCount
        self.unreadMentionCount = unreadMentionCount
    }
}

/// A message's encoding by ``JSONBytesEncoder``, which only a message can make: what a busy
/// room's summaries share of its newest message.
public struct EncodedMessage: Sendable {
    public let json: [UInt8]

    public init(_ message: Message) throws {
        self.json = try JSONBytesEncoder().encode(message)
    }
}

extension RoomEvent {
    /// A busy room's summary for `userID`, on their notification topic. Two reads of the same
    /// state (a backstop that ran beside its release) have one hash.
    public static func summary(_ summary: NotificationSummary, for userID: Int64) -> Envelope<NotificationSummary> {
        Envelope(
            type: summaryType, data: summary,
            identity: summaryIdentity(
                room: summary.chatRoomId, seq: summary.seq, unread: summary.unreadCount,
                mentions: summary.unreadMentionCount, for: userID))
    }

    /// The summary's event as ``Envelope/json()`` writes it, around its room's newest message
    /// encoded once (nil when retention purged it): a busy room's readers share that encoding,
    /// which each reader's summary encoded again before (6 % of the worker's CPU in rooms of 100).
    public static func summaryJSON(
        room: Int64, seq: Int64, newest: EncodedMessage?, unreadCount: Int64, unreadMentionCount: Int64,
        for userID: Int64
    ) -> String {
        let identity = summaryIdentity(
            room: room, seq: seq, unread: unreadCount, mentions: unreadMentionCount, for: userID)
        var writer = JSONHandWriter()
        // Keys in the encoder's sorted order; a nil message is left out, as the encoder does.
        writer.beginObject()
        writer.key("data")
        writer.beginObject()
        writer.key("chatRoomId")
        writer.integer(room)
        if let newest {
            writer.key("message")
            writer.encoded(newest.json)
        }
        writer.key("seq")
        writer.integer(seq)
        writer.key("unreadCount")
        writer.integer(unreadCount)
        writer.key("unreadMentionCount")
        writer.integer(unreadMentionCount)
        writer.endObject()
        writer.key("hash")
        writer.string(Envelope<NotificationSummary>.hash(type: summaryType, identity: identity))
        writer.key("type")
        writer.string(summaryType)
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static let summaryType = "room-summary"

    private static func summaryIdentity(room: Int64, seq: Int64, unread: Int64, mentions: Int64, for user: Int64)
        -> String
    { "\(room):\(user):\(seq):\(unread):\(mentions)" }
}
