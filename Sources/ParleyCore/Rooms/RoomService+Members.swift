/// Members, invitations and links: who may pull whom into a room (<doc:RoomInvitations>).
extension RoomService {
    /// Nobody joins, is added back or is mentioned by someone who blocked them or whom they
    /// blocked (`blocked`), whatever the add policy.
    func refuseBlocks(between userID: Int64, and others: [Int64]) async throws {
        let pairs = Set(others.filter { $0 != userID }.map { UserPair(userID, $0) })
        guard !pairs.isEmpty else { return }
        if try await !rooms.blockedPairs(pairs).isEmpty {
            throw ParleyError(.blocked, "A block between you and this user keeps them out of your rooms.")
        }
    }

    /// Whether adding `userID` makes an invitation rather than a membership: they left the
    /// room themselves, or, under ``RoomAddPolicy/invite``, share no room with the adder.
    func needsInvitation(_ userID: Int64, by adderID: Int64, roomID: Int64?) async throws -> Bool {
        if let roomID, try await rooms.hasLeft(roomID: roomID, userID: userID) { return true }
        return addPolicy == .invite ? try await !rooms.shareRoom(adderID, userID) : false
    }

    /// A page of members by user id, after `after`.
    public func members(roomID: Int64, for userID: Int64, after: Int64?, limit: Int) async throws -> [Member] {
        try await require(.reader, roomID: roomID, userID: userID)
        return try await rooms.members(roomID: roomID, after: after, limit: limit)
    }

    /// An admin adds a user or changes a member's role. Someone who cannot read the room yet
    /// becomes a member at once, or is invited (``needsInvitation(_:by:roomID:)``).
    public func setMember(roomID: Int64, memberID: Int64, role: RoomRole, by userID: Int64) async throws
        -> MembershipChange
    {
        try await requireAdminOfMultiparty(roomID: roomID, userID: userID)
        try await refuseBlocks(between: userID, and: [memberID])
        let adding = try await rooms.role(roomID: roomID, userID: memberID) == nil
        if adding { try await spend("members", 1, of: .perHour(limits.membersPerHour), by: userID) }
        if adding,
            try await needsInvitation(memberID, by: userID, roomID: roomID)
        {
            return .invited(try await rooms.invite(roomID: roomID, inviteeID: memberID, role: role, by: userID))
        }
        try await rooms.setDirectMember(roomID: roomID, userID: memberID, role: role, by: userID)
        guard let member = try await rooms.member(roomID: roomID, userID: memberID) else {
            throw ParleyError.notFound("No such user.")
        }
        return .member(member)
    }

    /// The caller's pending invitations.
    public func invitations(for userID: Int64, after: Int64?, limit: Int) async throws -> [Invitation] {
        try await rooms.invitations(for: userID, after: after, limit: limit)
    }

    /// The invitee joins the room with the invitation's role.
    public func accept(invitationID: Int64, by userID: Int64) async throws -> RoomView {
        guard let roomID = try await rooms.accept(invitationID: invitationID, by: userID) else {
            throw ParleyError.notFound("No such invitation.")
        }
        return try await room(id: roomID, for: userID)
    }

    public func decline(invitationID: Int64, by userID: Int64) async throws {
        guard try await rooms.decline(invitationID: invitationID, by: userID) else {
            throw ParleyError.notFound("No such invitation.")
        }
    }

    /// An admin removes a member, or a member leaves: by every path (a group's or application
    /// role's too) but a required link, and back only by an invitation.
    public func removeMember(roomID: Int64, memberID: Int64, by userID: Int64) async throws {
        if memberID == userID {
            try await require(.reader, roomID: roomID, userID: userID)
            // The pair's room is found again by the pair; leaving it would lock both out.
            guard try await rooms.room(id: roomID, for: userID)?.type == .multiparty else {
                throw ParleyError(.forbidden, "A two-party room cannot be left.")
            }
            guard try await rooms.leave(roomID: roomID, userID: userID) else {
                throw ParleyError.notFound("The user is not a member of the room.")
            }
            return
        }
        try await requireAdminOfMultiparty(roomID: roomID, userID: userID)
        guard try await rooms.removeDirectMember(roomID: roomID, userID: memberID, by: userID) else {
            throw ParleyError.notFound("The user is not a direct member of the room.")
        }
    }

    /// Groups and application roles are the directory's: only a system administrator (who
    /// administers the room) links them, whether or not the id exists.
    public static func requireDirectoryAdmin(_ identity: AuthenticatedUser) throws {
        guard identity.isAdmin else {
            throw ParleyError(.forbidden, "Linking groups and application roles needs a system administrator.")
        }
    }

    public func setGroup(
        roomID: Int64, groupID: Int64, role: RoomRole?, required: Bool = false, by identity: AuthenticatedUser
    ) async throws {
        try Self.requireDirectoryAdmin(identity)
        try await requireAdminOfMultiparty(roomID: roomID, userID: identity.userID)
        guard
            try await rooms.setGroup(
                roomID: roomID, groupID: groupID, role: role, required: required, by: identity.userID)
        else { throw ParleyError.notFound("The group is not linked to the room.") }
    }

    public func setAppRole(
        roomID: Int64, appRoleID: Int64, role: RoomRole?, required: Bool = false, by identity: AuthenticatedUser
    ) async throws {
        try Self.requireDirectoryAdmin(identity)
        try await requireAdminOfMultiparty(roomID: roomID, userID: identity.userID)
        guard
            try await rooms.setAppRole(
                roomID: roomID, appRoleID: appRoleID, role: role, required: required, by: identity.userID)
        else { throw ParleyError.notFound("The application role is not linked to the room.") }
    }
}
