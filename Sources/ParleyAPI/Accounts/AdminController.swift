import Foundation
import Hummingbird
import ParleyCore

/// `/v1/admin/*`: users, groups, applications and roles, for system administrators only. The
/// rules are the directory service's, shared with the `parley user|group|role` commands.
struct AdminController: Sendable {
    let directory: DirectoryService

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    func addRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.post("users") { request, context in
            let body = try await JSONBody.decode(AdminUserRequest.self, from: request, context: context)
            let user = try await directory.createUser(
                NewUser(
                    email: body.email, firstName: body.firstName, lastName: body.lastName, passwordHash: "",
                    isAdmin: body.isAdmin ?? false),
                password: body.password)
            return JSONResponse(.created, UserResponse(own: user))
        }
        admin.post("groups") { request, context in
            let body = try await JSONBody.decode(GroupRequest.self, from: request, context: context)
            return JSONResponse(.created, try await directory.createGroup(name: body.name))
        }
        admin.put("groups/:id/members/:userId") { _, context in
            try await directory.addMember(
                groupID: try context.parameters.id("id"), userID: try context.parameters.id("userId"))
            return Response(status: .noContent)
        }
        admin.delete("groups/:id/members/:userId") { _, context in
            try await directory.removeMember(
                groupID: try context.parameters.id("id"), userID: try context.parameters.id("userId"))
            return Response(status: .noContent)
        }
        admin.get("apps") { _, _ in
            JSONResponse(.ok, ApplicationsResponse(apps: try await directory.applications()))
        }
        admin.post("apps/:code/roles") { request, context in
            let body = try await JSONBody.decode(RoleRequest.self, from: request, context: context)
            let role = try await directory.createRole(
                appCode: context.parameters.get("code") ?? "", code: body.code, name: body.name, rank: body.rank ?? 0)
            return JSONResponse(.created, role)
        }
        admin.put("users/:id/roles/:roleId") { _, context in
            try await directory.grantRole(
                userID: try context.parameters.id("id"), roleID: try context.parameters.smallID("roleId"))
            return Response(status: .noContent)
        }
        admin.delete("users/:id/roles/:roleId") { _, context in
            try await directory.revokeRole(
                userID: try context.parameters.id("id"), roleID: try context.parameters.smallID("roleId"))
            return Response(status: .noContent)
        }
    }
}

/// 403 for every caller who is not a system administrator.
struct AdministratorsOnly: RouterMiddleware {
    typealias Context = AuthenticatedRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard context.identity.isAdmin else {
            throw ParleyError(.forbidden, "Only system administrators may do this.")
        }
        return try await next(request, context)
    }
}
