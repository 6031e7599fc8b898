import Foundation
import Hummingbird
import ParleyCore

/// `/v1/auth/*`: register, login, token exchange, refresh, logout.
struct AuthController: Sendable {
    let accounts: AccountService
    let endpoint: MQTTEndpoint

    func addPublicRoutes(to group: RouterGroup<ParleyRequestContext>) {
        // With passwords off (`PARLEY_AUTH_PASSWORD=off`) these are no routes at all: 404.
        if accounts.policy.passwordSignIn { addPasswordRoutes(to: group) }
        // Without a trusted issuer there is nothing to exchange: 404.
        if accounts.tokenExchange != nil {
            group.post("auth/token") { request, context in
                let body = try await JSONBody.decode(TokenExchangeRequest.self, from: request, context: context)
                let token = try body.validatedSubjectToken()
                do {
                    let signedIn = try await accounts.exchange(
                        token: token, device: try body.device?.registration() ?? DeviceRegistration(),
                        clientAddress: context.clientAddress)
                    return JSONResponse(.ok, LoginResponse(signedIn, endpoint: endpoint))
                } catch let refused as TokenRefused {
                    // The reason is for the operator; the client learns only that the token is refused.
                    context.logger.notice("subject token refused", metadata: ["reason": "\(refused.reason)"])
                    throw ParleyError(.invalidToken, "The subject token is not valid here.")
                }
            }
        }
        group.post("auth/refresh") { request, context in
            let body = try await JSONBody.decode(RefreshRequest.self, from: request, context: context)
            let signedIn = try await accounts.refresh(token: body.refreshToken)
            return JSONResponse(.ok, LoginResponse(signedIn, endpoint: endpoint))
        }
    }

    private func addPasswordRoutes(to group: RouterGroup<ParleyRequestContext>) {
        group.post("auth/register") { request, context in
            let body = try await JSONBody.decode(RegisterRequest.self, from: request, context: context)
            let user = try await accounts.register(
                NewUser(email: body.email, firstName: body.firstName, lastName: body.lastName, passwordHash: ""),
                password: body.password, clientAddress: context.clientAddress)
            return JSONResponse(.created, UserResponse(own: user))
        }
        group.post("auth/login") { request, context in
            let body = try await JSONBody.decode(LoginRequest.self, from: request, context: context)
            let signedIn = try await accounts.login(
                email: body.email, password: body.password,
                device: try body.device?.registration() ?? DeviceRegistration(),
                clientAddress: context.clientAddress)
            return JSONResponse(.ok, LoginResponse(signedIn, endpoint: endpoint))
        }
    }

    func addSignedInRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.post("auth/logout") { _, context in
            try await accounts.logout(context.identity)
            return Response(status: .noContent)
        }
    }
}
