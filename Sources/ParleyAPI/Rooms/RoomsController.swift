import Foundation
import Hummingbird
import ParleyCore

/// `/v1/rooms/...`: rooms, members, group and application-role links, messages, read markers.
public struct RoomsController: Sendable {
    let service: RoomService
    /// Answers history's `changedSince`.
    let actions: MessageActionService

    public init(service: RoomService, actions: MessageActionService) {
        self.service = service
        self.actions = actions
    }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        addRoomRoutes(to: group)
        addMembershipRoutes(to: group)
        addMessageRoutes(to: group)
    }

    private func addRoomRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("rooms") { request, context in
            let paging = try Paging(request, defaultLimit: 20, maximum: 100)
            let messages = try request.integer(query: "messages", default: 0, range: 0...50)
            let page = RoomPage(limit: paging.limit, cursor: paging.cursor, since: try request.time(query: "since"))
            let (rooms, next) = try await service.list(
                for: context.identity.userID, page: page, latestMessages: messages)
            return JSONResponse(
                .ok, RoomsResponse(rooms: rooms.map { RoomResponse($0, to: context.identity) }, nextCursor: next))
        }
        group.post("rooms") { request, context in
            let body = try await JSONBody.decode(
                CreateRoomRequest.self, from: request, context: context, limit: JSONBody.messageLimit)
            let room = try await service.create(
                by: context.identity.userID, name: body.name,
                members: body.members.map { ($0.userId, $0.role) },
                firstMessage: body.firstMessage)
            return JSONResponse(.created, RoomResponse(room, to: context.identity))
        }
        group.put("rooms/direct/:userId") { _, context in
            let (room, created) = try await service.direct(
                userID: context.identity.userID, peerID: try context.parameters.id("userId"))
            return JSONResponse(created ? .created : .ok, RoomResponse(room, to: context.identity))
        }
        group.get("rooms/:id") { request, context in
            let messages = try request.integer(query: "messages", default: 0, range: 0...50)
            let room = try await service.room(
                id: try context.parameters.id("id"), for: context.identity.userID, latestMessages: messages)
            return JSONResponse(.ok, RoomResponse(room, to: context.identity))
        }
        group.patch("rooms/:id") { request, context in
            let body = try await JSONBody.decode(RoomChangeRequest.self, from: request, context: context)
            let room = try await service.change(
                roomID: try context.parameters.id("id"), name: body.name, description: body.description,
                by: context.identity.userID)
            return JSONResponse(.ok, RoomResponse(room, to: context.identity))
        }
        group.put("rooms/:id/hidden") { request, context in
            let body = try await JSONBody.decode(HiddenRequest.self, from: request, context: context)
            try await service.setHidden(
                roomID: try context.parameters.id("id"), hidden: body.hidden, by: context.identity.userID)
            return Response(status: .noContent)
        }
        for (path, archived) in [("rooms/:id/archive", true), ("rooms/:id/unarchive", false)] {
            group.post(RouterPath(path)) { _, context in
                try await service.setArchived(
                    roomID: try context.parameters.id("id"), archived: archived, by: context.identity.userID)
                return Response(status: .noContent)
            }
        }
    }

    private func addMembershipRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("rooms/:id/members") { request, context in
            let paging = try Paging(request, defaultLimit: 100, maximum: 500)
            let members = try await service.members(
                roomID: try context.parameters.id("id"), for: context.identity.userID, after: try paging.idCursor(),
                limit: paging.readLimit)
            return JSONResponse(
                .ok,
                paging.page(members.map { MemberResponse($0, to: context.identity) }) { String($0.user.id) })
        }
        group.put("rooms/:id/members/:userId") { request, context in
            let body = try await JSONBody.decode(RoleRequestBody.self, from: request, context: context)
            let change = try await service.setMember(
                roomID: try context.parameters.id("id"), memberID: try context.parameters.id("userId"), role: body.role,
                by: context.identity.userID)
            switch change {
            case .member(let member):
                return try JSONResponse(.ok, MemberResponse(member, to: context.identity))
                    .response(from: request, context: context)
            case .invited(let invitation):
                return try JSONResponse(.accepted, InvitationResponse(invitation: invitation))
                    .response(from: request, context: context)
            }
        }
        group.get("me/invitations") { request, context in
            let paging = try Paging(request, defaultLimit: 20, maximum: 100)
            let found = try await service.invitations(
                for: context.identity.userID, after: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(.ok, paging.page(found) { String($0.id) })
        }
        group.post("me/invitations/:id/accept") { _, context in
            let room = try await service.accept(
                invitationID: try context.parameters.id("id"), by: context.identity.userID)
            return JSONResponse(.ok, RoomResponse(room, to: context.identity))
        }
        group.post("me/invitations/:id/decline") { _, context in
            try await service.decline(invitationID: try context.parameters.id("id"), by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.delete("rooms/:id/members/:userId") { _, context in
            try await service.removeMember(
                roomID: try context.parameters.id("id"), memberID: try context.parameters.id("userId"),
                by: context.identity.userID)
            return Response(status: .noContent)
        }
        group.put("rooms/:id/groups/:groupId") { request, context in
            try RoomService.requireDirectoryAdmin(context.identity)
            let body = try await JSONBody.decode(LinkRequestBody.self, from: request, context: context)
            try await service.setGroup(
                roomID: try context.parameters.id("id"), groupID: try context.parameters.id("groupId"), role: body.role,
                required: body.required ?? false, by: context.identity)
            return Response(status: .noContent)
        }
        group.delete("rooms/:id/groups/:groupId") { _, context in
            try await service.setGroup(
                roomID: try context.parameters.id("id"), groupID: try context.parameters.id("groupId"), role: nil,
                by: context.identity)
            return Response(status: .noContent)
        }
        group.put("rooms/:id/app-roles/:roleId") { request, context in
            try RoomService.requireDirectoryAdmin(context.identity)
            let body = try await JSONBody.decode(LinkRequestBody.self, from: request, context: context)
            try await service.setAppRole(
                roomID: try context.parameters.id("id"), appRoleID: try context.parameters.smallID("roleId"),
                role: body.role, required: body.required ?? false, by: context.identity)
            return Response(status: .noContent)
        }
        group.delete("rooms/:id/app-roles/:roleId") { _, context in
            try await service.setAppRole(
                roomID: try context.parameters.id("id"), appRoleID: try context.parameters.smallID("roleId"), role: nil,
                by: context.identity)
            return Response(status: .noContent)
        }
    }

    private func addMessageRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("rooms/:id/messages") { request, context in
            if let since = try request.time(query: "changedSince") {
                return JSONResponse(
                    .ok,
                    try await MessageActionsController.changes(
                        request, since: since, roomID: try context.parameters.id("id"), service: actions,
                        userID: context.identity.userID))
            }
            let query = try Self.historyQuery(request)
            let (messages, hasMore) = try await service.history(
                roomID: try context.parameters.id("id"), query: query, for: context.identity.userID)
            return JSONResponse(
                .ok,
                MessagesResponse(
                    messages: messages, hasMore: hasMore,
                    nextCursor: hasMore ? HistoryCursor.next(after: messages, query: query)?.encoded : nil))
        }
        group.post("rooms/:id/messages") { request, context in
            let body = try await JSONBody.message(from: request, context: context)
            let roomID = try context.parameters.id("id")
            var (message, created) = try await service.send(
                roomID: roomID, message: body, by: context.identity.userID)
            if !created && !message.reactions.isEmpty {
                // A retry answers with the message as it stands, its reactions as the caller sees them.
                message = try await actions.message(message.id, roomID: roomID, for: context.identity.userID)
            }
            return JSONResponse(created ? .created : .ok, message)
        }
        group.post("rooms/:id/read") { request, context in
            let body = try await JSONBody.decode(ReadRequest.self, from: request, context: context)
            let marker = try await service.markRead(
                roomID: try context.parameters.id("id"),
                target: try ReadMarker.Target(messageId: body.messageId, seq: body.seq), by: context.identity.userID)
            return JSONResponse(.ok, marker)
        }
    }

    static func historyQuery(_ request: Request) throws -> HistoryQuery {
        let paging = try Paging(request, defaultLimit: 50, maximum: 200)
        var before = try request.seq(query: "before")
        var after = try request.seq(query: "after")
        if let text = paging.cursor {
            guard before == nil, after == nil, let cursor = HistoryCursor(text) else {
                throw ParleyError.invalidRequest(
                    "cursor is one this server issued, and stands instead of before and after", field: "cursor")
            }
            (before, after) = (cursor.before, cursor.after)
        }
        return HistoryQuery(
            before: before, after: after, since: try request.time(query: "since"),
            until: try request.time(query: "until"), limit: paging.limit)
    }
}
