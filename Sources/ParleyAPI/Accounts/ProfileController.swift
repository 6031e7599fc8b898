import Foundation
import Hummingbird
import ParleyCore

/// `/v1/me`, `/v1/devices`, `/v1/users`: what a signed-in user sees of accounts.
struct ProfileController: Sendable {
    let accounts: AccountService
    let users: any UserRepository
    let sessions: any SessionRepository

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("me") { _, context in
            guard let user = try await users.find(id: context.identity.userID) else { throw ParleyError.unauthorized }
            return JSONResponse(.ok, UserResponse(own: user))
        }
        group.patch("me") { request, context in
            let body = try await JSONBody.decode(ProfileRequest.self, from: request, context: context)
            let user = try await accounts.updateProfile(
                context.identity, firstName: body.firstName, lastName: body.lastName, password: body.password,
                currentPassword: body.currentPassword, clientAddress: context.clientAddress)
            return JSONResponse(.ok, UserResponse(own: user))
        }
        group.get("devices") { _, context in
            let devices = try await sessions.devices(userID: context.identity.userID)
            return JSONResponse(.ok, DevicesResponse(devices: devices.map(DeviceResponse.init)))
        }
        group.put("devices/:id/push") { request, context in
            let deviceID = try context.parameters.id("id")
            let body = try await JSONBody.decode(PushRequest.self, from: request, context: context)
            let registration = try PushRegistration(provider: body.pushProvider, token: body.pushToken)
            guard
                try await sessions.setPushToken(
                    userID: context.identity.userID, deviceID: deviceID, registration: registration)
            else { throw ParleyError.notFound("No such device.") }
            return Response(status: .noContent)
        }
        group.delete("devices/:id") { _, context in
            try await accounts.deleteDevice(context.identity, deviceID: try context.parameters.id("id"))
            return Response(status: .noContent)
        }
        group.get("users") { request, context in
            let paging = try Paging(request, defaultLimit: 20, maximum: 100)
            let query = request.uri.queryParameters["q"].map(String.init)?.trimmingCharacters(in: .whitespaces)
            if let query, query.count > 100 {
                throw ParleyError.invalidRequest("q must be at most 100 characters", field: "q")
            }
            // Names by their start; an e-mail address only whole (nobody collects addresses).
            let found = try await users.search(
                prefix: query?.isEmpty == true ? nil : query, emailPrefix: false,
                roomMatesOf: accounts.policy.directory == .roomMates ? context.identity.userID : nil,
                after: try paging.idCursor(), limit: paging.readLimit)
            return JSONResponse(
                .ok, paging.page(found.map { UserResponse($0, to: context.identity) }) { String($0.id) })
        }
        group.get("users/:id") { _, context in
            guard let user = try await users.find(id: try context.parameters.id("id")) else {
                throw ParleyError.notFound("No such user.")
            }
            return JSONResponse(.ok, UserResponse(user, to: context.identity))
        }
    }
}
