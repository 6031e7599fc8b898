import Foundation

/// A message found, with its room.
public struct SearchHit: Sendable, Equatable {
    public let message: Message
    public let room: RoomSummary

    public init(message: Message, room: RoomSummary) {
        self.message = message
        self.room = room
    }
}

/// Full-text search over what a user can read now.
public protocol SearchRepository: Sendable {
    /// Messages (not deleted) of rooms `userID` can read — of `roomID` only when given —
    /// matching every term, newest first, with an id below `before`.
    func searchMessages(terms: [String], userID: Int64, roomID: Int64?, before: Int64?, limit: Int) async throws
        -> [SearchHit]
    /// The user's rooms whose name, or two-party peer's name, matches every term, in the room
    /// list's order and paging.
    func searchRooms(terms: [String], userID: Int64, page: RoomPage) async throws -> (
        rooms: [RoomView], nextCursor: String?
    )
}

/// Search with its rules: the query's bounds, and highlights made for the caller.
public struct SearchService: Sendable {
    let search: any SearchRepository
    let rooms: RoomService

    public init(search: any SearchRepository, rooms: RoomService) {
        self.search = search
        self.rooms = rooms
    }

    /// A result: the hit, and its content with the matches marked.
    public struct Result: Sendable, Equatable {
        public let hit: SearchHit
        public let highlight: String
    }

    public func messages(q: String?, roomID: Int64?, before: Int64?, limit: Int, for userID: Int64) async throws
        -> [Result]
    {
        let query = try SearchQuery(q)
        // A room named that the caller cannot read does not exist for them.
        if let roomID { try await rooms.require(.reader, roomID: roomID, userID: userID) }
        let words = query.foldedWords
        return try await search.searchMessages(
            terms: query.terms, userID: userID, roomID: roomID, before: before, limit: limit
        ).map { Result(hit: $0, highlight: SearchText.highlight($0.message.content, words: words)) }
    }

    public func rooms(q: String?, page: RoomPage, for userID: Int64) async throws -> (
        rooms: [RoomView], nextCursor: String?
    ) {
        try await search.searchRooms(terms: try SearchQuery(q).terms, userID: userID, page: page)
    }
}
