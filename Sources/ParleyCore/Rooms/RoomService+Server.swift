import Foundation

/// What the app's server does in rooms through the server API (`/v1/server/*`): it knows its
/// rooms and acts with a key's budget, not a member's. It is the app's authority on who belongs
/// where (<doc:ServerKeys>): its adds are memberships at once, past a departure or a block.
extension RoomService {
    /// Who events name as the actor of the app's server: 0, as for an administrator's change
    /// of groups or roles (a notice's sender is stored as none).
    public static let appServer = MessageSubmission.systemSender

    /// The app's server makes a multiparty room of the members it names: no creator, so an
    /// admin among them (if any) administers it in the app; everyone added is told and pushed.
    /// Answers the room's id, name and description as stored.
    public func createRoom(
        asServerNamed name: String, description: String?, members: [(userID: Int64, role: RoomRole)]
    ) async throws -> (id: Int64, name: String, description: String?) {
        let name = try Self.roomName(name)
        let description = try description.flatMap(Self.roomDescription)
        guard (1...limits.membersPerRequest).contains(members.count) else {
            throw ParleyError.invalidRequest(
                "members lists 1 to \(limits.membersPerRequest) users", field: "members")
        }
        var roles: [Int64: RoomRole] = [:]
        for member in members {
            guard roles.updateValue(member.role, forKey: member.userID) == nil else {
                throw ParleyError.invalidRequest("members lists a user twice", field: "members")
            }
        }
        let id = try await rooms.createMultiparty(
            creatorID: nil, name: name, description: description, members: roles, firstMessage: nil)
        return (id, name, description)
    }

    /// The app's server adds a user to a multiparty room or changes their role (`not-found`
    /// for no room, `forbidden` for a two-party one); a departure ends.
    public func setMember(asServerIn roomID: Int64, memberID: Int64, role: RoomRole) async throws -> (
        member: Member, added: Bool
    ) {
        try await requireMultiparty(asServer: roomID)
        let added = try await rooms.role(roomID: roomID, userID: memberID) == nil
        try await rooms.setDirectMember(roomID: roomID, userID: memberID, role: role, by: Self.appServer)
        guard let member = try await rooms.member(roomID: roomID, userID: memberID) else {
            throw ParleyError.notFound("No such user.")
        }
        return (member, added)
    }

    /// The app's server removes a direct member; the room's last admin stays (`last-admin`).
    public func removeMember(asServerFrom roomID: Int64, memberID: Int64) async throws {
        try await requireMultiparty(asServer: roomID)
        guard try await rooms.removeDirectMember(roomID: roomID, userID: memberID, by: Self.appServer) else {
            throw ParleyError.notFound("The user is not a direct member of the room.")
        }
    }

    private func requireMultiparty(asServer roomID: Int64) async throws {
        switch try await rooms.roomType(id: roomID) {
        case nil: throw ParleyError.notFound("No such room.")
        case .twoparty: throw ParleyError(.forbidden, "The members of a two-party room cannot change.")
        case .multiparty: return
        }
    }

    /// The app's server sending as its user: the user's rights, the key's budget (not the
    /// user's). The server knows its rooms, so a user who is no member is forbidden there, not
    /// told the room does not exist.
    public func send(asServerFor userID: Int64, roomID: Int64, message: NewMessage) async throws -> (
        message: Message, created: Bool
    ) {
        do {
            return try await send(roomID: roomID, message: message, by: userID, budgeted: false)
        } catch let error as ParleyError where error.code == .notFound {
            guard try await rooms.roomType(id: roomID) != nil else { throw error }
            throw ParleyError(.forbidden, "The user is not a member of the room.")
        }
    }

    /// A room notice of the app's server (`sentBy: "system"`), in any room: no sender, so no
    /// role, block or user budget applies. The same uid again answers the stored notice.
    public func postNotice(roomID: Int64, message: NewMessage) async throws -> (message: Message, created: Bool) {
        precondition(message.type == .system, "a notice is a system message")
        var submission = MessageSubmission.notice(
            roomID: roomID, message: message, traceparent: PipelineTrace.current())
        if let hook { submission = try await hook.reviewed(submission) }
        let sent = try await messages.send(batch: [submission])[0].get()
        return (sent.message, sent.created)
    }

    /// History as the app's server sees it (`GET /v1/server/rooms/{id}/messages`): every
    /// message of the room, reactions without `me`.
    public func serverHistory(roomID: Int64, query: HistoryQuery) async throws -> (
        messages: [Message], hasMore: Bool
    ) {
        let page = try await messages.messages(roomID: roomID, query: query, viewer: nil)
        if page.messages.isEmpty, try await rooms.roomType(id: roomID) == nil {
            throw ParleyError.notFound("No such room.")
        }
        return page
    }
}
