import Hummingbird
import ParleyCore

/// Every list pages alike: `limit` and an opaque `cursor` in, the items and `nextCursor` out,
/// `nextCursor` null on the last page; every list reads its `limit` and `cursor` here. What a
/// cursor holds is the list's own, and clients pass it back unread: the last id for lists
/// keyed by id (``idCursor()``, ``page(_:cursor:)``, which reads one item more than asked
/// so the last page says it is the last), a position in the room list, a `seq` window of
/// history, a change's time and id.
struct Paging {
    let limit: Int
    let cursor: String?

    init(_ request: Request, defaultLimit: Int, maximum: Int) throws {
        limit = try request.integer(query: "limit", default: defaultLimit, range: 1...maximum)
        cursor = request.uri.queryParameters["cursor"].map(String.init)
    }

    /// How many to read: one more than the page, to know whether another follows.
    var readLimit: Int { limit + 1 }

    /// The cursor of a list keyed by id: the last id of the previous page.
    func idCursor() throws -> Int64? {
        try cursor.map { text in
            guard let value = Int64(text), value > 0 else {
                throw ParleyError.foreignCursor
            }
            return value
        }
    }

    /// The page of what was read (at most ``readLimit``), and the next cursor.
    func page<Item: ListItem>(_ read: [Item], cursor: (Item) -> String) -> ListPage<Item> {
        let items = Array(read.prefix(limit))
        return ListPage(items: items, nextCursor: read.count > limit ? items.last.map(cursor) : nil)
    }
}

/// What a list pages: each kind of item is listed under one key of its own (`users`, `files`).
protocol ListItem: Codable, Sendable {
    static var listKey: String { get }
}

/// `{<Item.listKey>: [items], nextCursor}`, with `nextCursor` present as null at the end.
struct ListPage<Item: ListItem>: Codable, Sendable {
    let items: [Item]
    let nextCursor: String?

    init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(items, forKey: Key(Item.listKey))
        try container.encode(nextCursor, forKey: Key("nextCursor"))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        items = try container.decode([Item].self, forKey: Key(Item.listKey))
        nextCursor = try container.decode(String?.self, forKey: Key("nextCursor"))
    }

    struct Key: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}
