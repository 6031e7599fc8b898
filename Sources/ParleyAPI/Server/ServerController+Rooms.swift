import Foundation
import Hummingbird
import ParleyCore

/// `/v1/server/rooms` and their members, by the app's own user ids (`rooms:write`).
extension ServerController {
    struct RoomRequest: Decodable {
        let name: String
        let description: String?
        let members: [MemberRequest]
    }

    struct MemberRequest: Decodable {
        let externalId: String
        let role: RoomRole
    }

    struct RoleRequest: Decodable {
        let role: RoomRole
    }

    /// A member as the app's server names them: its id and Parley's, and the room role.
    struct ServerMember: Codable, Equatable {
        let externalId: String
        let userId: Int64
        let role: RoomRole
    }

    /// A room the app's server made: the members it named.
    struct ServerRoomResponse: Encodable {
        let id: Int64
        let type = "multiparty"
        let name: String
        @NullEncoded var description: String?
        let members: [ServerMember]
    }

    func addRoomRoutes(to server: RouterGroup<ServerRequestContext>) {
        server.post("rooms") { request, context in
            try context.require(.roomsWrite)
            let body = try await JSONBody.decode(RoomRequest.self, from: request, context: context)
            let externalIDs = body.members.map(\.externalId)
            // Bounded before any lookup; the room rules say the same bound again.
            guard externalIDs.count <= rooms.limits.membersPerRequest else {
                throw ParleyError.invalidRequest(
                    "members lists more than \(rooms.limits.membersPerRequest) users", field: "members")
            }
            let userIDs = try await provisioning.userIDs(
                issuer: context.key.issuer, subjects: externalIDs, field: "members")
            let roles = body.members.map(\.role)
            let room = try await rooms.createRoom(
                asServerNamed: body.name, description: body.description,
                members: Array(zip(userIDs, roles)).map { (userID: $0.0, role: $0.1) })
            let members = zip(externalIDs, zip(userIDs, roles)).map {
                ServerMember(externalId: $0.0, userId: $0.1.0, role: $0.1.1)
            }
            return JSONResponse(
                .created,
                ServerRoomResponse(id: room.id, name: room.name, description: room.description, members: members))
        }
        server.put("rooms/:id/members/:externalId") { request, context in
            try context.require(.roomsWrite)
            let body = try await JSONBody.decode(RoleRequest.self, from: request, context: context)
            let externalID = context.parameters.get("externalId") ?? ""
            let (member, added) = try await rooms.setMember(
                asServerIn: try context.parameters.id("id"), memberID: try await user(externalID, of: context.key).id,
                role: body.role)
            return JSONResponse(
                added ? .created : .ok, ServerMember(externalId: externalID, userId: member.user.id, role: member.role))
        }
        server.delete("rooms/:id/members/:externalId") { _, context in
            try context.require(.roomsWrite)
            let externalID = context.parameters.get("externalId") ?? ""
            try await rooms.removeMember(
                asServerFrom: try context.parameters.id("id"), memberID: try await user(externalID, of: context.key).id)
            return Response(status: .noContent)
        }
    }
}
