import Hummingbird
import ParleyCore

/// Everything the account routes need, and where they go on the router.
public struct AccountsAPI: Sendable {
    let accounts: AccountService
    let users: any UserRepository
    let sessions: any SessionRepository
    let directory: any DirectoryRepository
    let hasher: any PasswordHasher
    let cache: SessionCache
    let endpoint: MQTTEndpoint

    public init(
        accounts: AccountService, users: any UserRepository, sessions: any SessionRepository,
        directory: any DirectoryRepository, hasher: any PasswordHasher, cache: SessionCache, endpoint: MQTTEndpoint
    ) {
        self.accounts = accounts
        self.users = users
        self.sessions = sessions
        self.directory = directory
        self.hasher = hasher
        self.cache = cache
        self.endpoint = endpoint
    }

    /// Resolves access tokens outside the bearer middleware (`?access_token=` on file content).
    public var accessTokens: AccessTokens { AccessTokens(sessions: sessions, cache: cache) }

    /// - Parameter signedInRoutes: further routes for signed-in users (rooms, files ...).
    public func addRoutes(
        to router: Router<ParleyRequestContext>,
        signedInRoutes: (RouterGroup<AuthenticatedRequestContext>) -> Void = { _ in }
    ) {
        let v1 = router.group("v1")
        let auth = AuthController(accounts: accounts, endpoint: endpoint)
        auth.addPublicRoutes(to: v1)
        let signedIn = v1.group()
            .add(middleware: BearerAuthenticationMiddleware(sessions: sessions, cache: cache))
            .group(context: AuthenticatedRequestContext.self)
        auth.addAuthenticatedRoutes(to: signedIn)
        ProfileController(accounts: accounts, users: users, sessions: sessions).addRoutes(to: signedIn)
        AdminController(users: users, directory: directory, hasher: hasher).addRoutes(to: signedIn)
        signedInRoutes(signedIn)
    }
}
