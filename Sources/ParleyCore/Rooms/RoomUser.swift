/// A user in a room: whose role is asked, whose receipts are kept, whose
/// read pushes are coalesced.
public struct RoomUser: Hashable, Sendable {
    public let roomID: Int64
    public let userID: Int64

    public init(roomID: Int64, userID: Int64) {
        self.roomID = roomID
        self.userID = userID
    }
}
