import Hummingbird
import ParleyCore

/// `/v1/me/privacy`: what others see of the caller.
public struct PrivacyController: Sendable {
    let service: PrivacyService

    public init(service: PrivacyService) { self.service = service }

    public func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("me/privacy") { _, context in
            JSONResponse(.ok, try await service.privacy(of: context.identity.userID))
        }
        group.patch("me/privacy") { request, context in
            let change = try await JSONBody.decode(PrivacyChange.self, from: request, context: context)
            return JSONResponse(.ok, try await service.change(context.identity.userID, change))
        }
    }
}
