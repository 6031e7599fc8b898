import Foundation

/// An invitation to a multiparty room, pending until its invitee accepts or declines: what an
/// add becomes for someone who left the room, or who shares no room with the adder under
/// `PARLEY_ROOM_ADD_POLICY=invite`. The invitee sees the room's name and the inviter, nothing
/// of its history.
public struct Invitation: Codable, Sendable, Equatable {
    public struct Room: Codable, Sendable, Equatable {
        public let id: Int64
        public let name: String
        public let type: RoomView.Kind

        public init(id: Int64, name: String, type: RoomView.Kind) {
            self.id = id
            self.name = name
            self.type = type
        }
    }

    public struct Inviter: Codable, Sendable, Equatable {
        public let id: Int64
        public let firstName: String
        public let lastName: String

        public init(id: Int64, firstName: String, lastName: String) {
            self.id = id
            self.firstName = firstName
            self.lastName = lastName
        }
    }

    public let id: Int64
    public let room: Room
    public let inviter: Inviter
    public let createdAt: Date

    public init(id: Int64, room: Room, inviter: Inviter, createdAt: Date) {
        self.id = id
        self.room = room
        self.inviter = inviter
        self.createdAt = createdAt
    }
}

/// Whom an admin's add makes a member at once (`PARLEY_ROOM_ADD_POLICY`).
public enum RoomAddPolicy: String, Sendable, CaseIterable {
    /// Anyone (the source design: anyone may be found and added), except someone who left.
    case anyone
    /// Only people who already share a room with the adder; anyone else gets an invitation.
    case invite
}

/// What adding a user to a room did: a membership, or an invitation for them to accept.
public enum MembershipChange: Sendable {
    case member(Member)
    case invited(Invitation)
}

/// Two users, for asking whether either blocked the other.
public struct UserPair: Hashable, Sendable {
    public let userID: Int64
    public let otherID: Int64

    public init(_ userID: Int64, _ otherID: Int64) {
        self.userID = userID
        self.otherID = otherID
    }
}

/// Invitations and the facts an add is decided by; every change records its events.
public protocol InvitationRepository: Sendable {
    /// The pairs of which one user blocked the other, either way.
    func blockedPairs(_ pairs: Set<UserPair>) async throws -> Set<UserPair>
    /// Whether the two users are members of one room.
    func shareRoom(_ userID: Int64, _ otherID: Int64) async throws -> Bool
    /// Whether the user left the room of their own accord (and was not let back in since).
    func hasLeft(roomID: Int64, userID: Int64) async throws -> Bool
    /// The pending invitation of the user to the room with `role`, made now or already there
    /// (at most one per room and user); the invitee's notification topic gets `invitation`.
    func invite(roomID: Int64, inviteeID: Int64, role: RoomRole, by inviterID: Int64) async throws -> Invitation
    /// The user's pending invitations by id after `after`.
    func invitations(for userID: Int64, after: Int64?, limit: Int) async throws -> [Invitation]
    /// Makes the invitee a direct member with the invitation's role; the room's id, or nil
    /// when the user has no such invitation.
    func accept(invitationID: Int64, by userID: Int64) async throws -> Int64?
    /// Withdraws the invitation; false when the user has no such invitation.
    func decline(invitationID: Int64, by userID: Int64) async throws -> Bool
}
