/// A member's role in a room (source §4.1.1); each includes the ones below it.
public enum RoomRole: String, Sendable, Codable, CaseIterable, Comparable {
    case reader, writer, admin

    /// The `cloud.role.rank` of the messenger application's role with this code.
    public var rank: Int {
        switch self {
        case .reader: 1
        case .writer: 2
        case .admin: 3
        }
    }

    public init?(rank: Int) {
        guard let role = Self.allCases.first(where: { $0.rank == rank }) else { return nil }
        self = role
    }

    public static func < (lhs: RoomRole, rhs: RoomRole) -> Bool { lhs.rank < rhs.rank }
}
