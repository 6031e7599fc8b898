import Foundation
import Hummingbird
import ParleyCore

/// `/v1/admin/*`: users, groups, applications and roles, for system administrators only.
struct AdminController: Sendable {
    let users: any UserRepository
    let directory: any DirectoryRepository
    let hasher: any PasswordHasher

    /// - Parameter admin: `/v1/admin`, behind `AdministratorsOnly`.
    func addRoutes(to admin: RouterGroup<AuthenticatedRequestContext>) {
        admin.post("users") { request, context in
            let body = try await JSONBody.decode(AdminUserRequest.self, from: request, context: context)
            var newUser = try NewUser(
                email: body.email, firstName: body.firstName, lastName: body.lastName, passwordHash: "",
                isAdmin: body.isAdmin ?? false
            ).validated()
            newUser.passwordHash = try await hasher.hash(PasswordRule.validated(body.password))
            return JSONResponse(.created, UserResponse(try await users.create(newUser)))
        }
        admin.post("groups") { request, context in
            let body = try await JSONBody.decode(GroupRequest.self, from: request, context: context)
            return JSONResponse(.created, try await directory.createGroup(name: try Self.displayName(body.name)))
        }
        admin.put("groups/:id/members/:userId") { _, context in
            try await directory.addMember(
                groupID: try context.parameters.id("id"), userID: try context.parameters.id("userId"))
            return Response(status: .noContent)
        }
        admin.delete("groups/:id/members/:userId") { _, context in
            guard
                try await directory.removeMember(
                    groupID: try context.parameters.id("id"), userID: try context.parameters.id("userId"))
            else { throw ParleyError.notFound("The user is not a member of the group.") }
            return Response(status: .noContent)
        }
        admin.get("apps") { _, _ in
            JSONResponse(.ok, ApplicationsResponse(apps: try await directory.applications()))
        }
        admin.post("apps/:code/roles") { request, context in
            let appCode = try DirectoryCode.validated(context.parameters.get("code") ?? "", field: "code")
            let body = try await JSONBody.decode(RoleRequest.self, from: request, context: context)
            let code = try DirectoryCode.validated(body.code, field: "code")
            let rank = body.rank ?? 0
            guard (0...1000).contains(rank) else {
                throw ParleyError.invalidRequest("rank must be 0 to 1000", field: "rank")
            }
            let role = try await directory.createRole(
                appCode: appCode, code: code, name: try Self.displayName(body.name), rank: rank)
            return JSONResponse(.created, role)
        }
        admin.put("users/:id/roles/:roleId") { _, context in
            try await directory.grantRole(
                userID: try context.parameters.id("id"), roleID: try context.parameters.smallID("roleId"))
            return Response(status: .noContent)
        }
        admin.delete("users/:id/roles/:roleId") { _, context in
            guard
                try await directory.revokeRole(
                    userID: try context.parameters.id("id"), roleID: try context.parameters.smallID("roleId"))
            else { throw ParleyError.notFound("The user does not hold this role.") }
            return Response(status: .noContent)
        }
    }
}

extension AdminController {
    /// Group and role names: trimmed, 1 to 200 characters.
    static func displayName(_ name: String) throws -> String {
        try TextRule.validated(name.trimmingCharacters(in: .whitespaces), field: "name", length: 1...200)
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
