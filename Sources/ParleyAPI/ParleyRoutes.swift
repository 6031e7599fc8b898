import Hummingbird
import ParleyCore
import Prometheus
import ServiceLifecycle

/// Where every route of Parley is mounted, and behind which middleware, read top to bottom.
/// `parley serve` and the tests build their routers here; a controller only adds its own
/// paths to the group it is handed.
public struct ParleyRoutes: Sendable {
    let probes: [any DependencyProbe]
    let readinessTimeout: Duration
    let registry: PrometheusCollectorRegistry
    /// The features behind `/v1`; nil for tests of the HTTP layer alone (health, documents).
    let features: Features?
    /// The endpoints the MQTT broker asks; only on the internal listener.
    let broker: BrokerAuthController?
    /// Whose `Forwarded` headers name the client.
    let trustedProxies: TrustedProxies

    public init(
        probes: [any DependencyProbe], readinessTimeout: Duration = .seconds(2),
        registry: PrometheusCollectorRegistry, features: Features?, broker: BrokerAuthController? = nil,
        trustedProxies: TrustedProxies = .none
    ) {
        self.probes = probes
        self.readinessTimeout = readinessTimeout
        self.registry = registry
        self.features = features
        self.broker = broker
        self.trustedProxies = trustedProxies
    }

    /// What the features run beside the listeners (none without features).
    public var background: [any Service] { features?.background ?? [] }

    /// The router clients reach, over TLS and cleartext.
    public func publicRouter() -> Router<ParleyRequestContext> {
        let router = Self.router(traced: PipelineTrace.isOn)
        if !trustedProxies.networks.isEmpty {
            router.add(middleware: ForwardedClientMiddleware(proxies: trustedProxies))
        }
        OperationsController(probes: probes, readinessTimeout: readinessTimeout).addRoutes(to: router)
        OpenAPIController().addRoutes(to: router)
        guard let features else { return router }
        // The web client: static files, no token (it signs in through /v1/auth).
        features.webClient.addRoutes(to: router)

        let v1 = router.group("v1")
        // No token: register, login, refresh.
        features.auth.addPublicRoutes(to: v1)
        // File content and thumbnails check their own credential (a bearer token,
        // `?access_token=` or a signed URL: players send no headers); public files need none.
        features.files.addContentRoutes(to: v1)

        // Everything else needs a bearer access token.
        let tokens = BearerAuthenticationMiddleware(sessions: features.sessions, cache: features.cache)
        let signedIn = v1.group()
            .add(middleware: tokens)
            .group(context: AuthenticatedRequestContext.self)
            .add(middleware: FileViewerMiddleware(links: features.links))
        // With PostgreSQL replicas: reads of users who wrote nothing lately may use them.
        if let writers = features.recentWriters { signedIn.add(middleware: ReplicaReadsMiddleware(writers: writers)) }
        features.auth.addSignedInRoutes(to: signedIn)
        features.profile.addRoutes(to: signedIn)
        features.blocks.addRoutes(to: signedIn)
        features.privacy.addRoutes(to: signedIn)
        features.moderation.addRoutes(to: signedIn)
        features.erasure.addRoutes(to: signedIn)
        features.avatars.addRoutes(to: signedIn)
        features.search.addRoutes(to: signedIn)
        features.rooms.addRoutes(to: signedIn)
        features.receipts.addRoutes(to: signedIn)
        features.messageActions.addRoutes(to: signedIn)
        features.notifications.addRoutes(to: signedIn)
        features.files.addSignedInRoutes(to: signedIn)
        // `/v1/admin/*`: system administrators only, signed in or through an admin key.
        let admin = v1.group("admin")
            .add(middleware: AdminKeyMiddleware(keys: features.keys, audit: features.audit, tokens: tokens))
            .group(context: AuthenticatedRequestContext.self)
            .add(middleware: FileViewerMiddleware(links: features.links))
            .add(middleware: AdministratorsOnly())
        features.admin.addRoutes(to: admin)
        features.moderation.addAdminRoutes(to: admin)
        features.erasure.addAdminRoutes(to: admin)
        features.apiKeys.addRoutes(to: admin)
        features.webhooks.addRoutes(to: admin)
        features.bots.addRoutes(to: admin)

        // `/v1/server/*`: the app's backend, with a server key (never a user's token).
        let server = v1.group("server").add(middleware: features.serverKeys).group(context: ServerRequestContext.self)
        features.server.addRoutes(to: server)
        return router
    }

    /// Health, metrics and the broker's endpoints, on the internal listener.
    public func internalRouter() -> Router<ParleyRequestContext> {
        let router = Self.router()
        OperationsController(probes: probes, readinessTimeout: readinessTimeout).addRoutes(to: router)
        MetricsController(registry: registry).addRoutes(to: router)
        broker?.addRoutes(to: router)
        return router
    }

    /// Every request gets an id, is counted, fails as problem+json (without a body for HEAD) and
    /// has its query form-decoded without NUL;
    /// with `traced`, each is a span (``RequestTracingMiddleware``).
    private static func router(traced: Bool = false) -> Router<ParleyRequestContext> {
        let router = Router(context: ParleyRequestContext.self)
        if traced { router.add(middleware: RequestTracingMiddleware()) }
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: HeadResponseMiddleware())
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: FormQueryMiddleware())
        return router
    }
}

extension ParleyRoutes {
    /// The controllers behind `/v1`, built from the ports they use: the one graph of the API,
    /// whichever adapters `parley serve` or a test chooses.
    public struct Features: Sendable {
        let auth: AuthController
        let profile: ProfileController
        let blocks: BlocksController
        let privacy: PrivacyController
        let moderation: ModerationController
        let erasure: ErasureController
        let avatars: AvatarsController
        let search: SearchController
        let admin: AdminController
        let rooms: RoomsController
        let messageActions: MessageActionsController
        let notifications: NotificationsController
        let files: FilesController
        let webClient: WebClientController
        let apiKeys: APIKeysController
        let serverKeys: ServerKeyMiddleware
        let server: ServerController
        let webhooks: WebhooksController
        let bots: BotsController
        let receipts: ReceiptsController
        /// What runs beside the listeners (the receipts' coalescer), started and stopped with them.
        public let background: [any Service]
        let keys: APIKeyService
        let audit: any AuditLog
        let sessions: any SessionRepository
        let cache: SessionCache
        /// Signs the file links of answers for their caller.
        let links: FileLinks
        /// Who wrote lately, when reads may use PostgreSQL replicas; nil: no replicas.
        let recentWriters: (any RecentWriters)?

        /// Every service is built by the composition root (`ServeGraph`); the controllers here
        /// only route to them.
        public init(
            accounts: AccountService, users: any UserRepository, sessions: any SessionRepository, cache: SessionCache,
            endpoint: MQTTEndpoint, directory: DirectoryService, blocks: BlockService,
            privacy: PrivacyService, moderation: ModerationService,
            rooms: RoomService, messageActions: MessageActionService,
            notificationSettings: any NotificationSettingsRepository, files: any FileRepository, store: any BlobStore,
            links: FileLinks, mediaJobs: (any JobQueue)?, uploadLimit: Int64, erasure: ErasureService,
            avatars: AvatarService, search: SearchService, keys: APIKeyService, audit: any AuditLog,
            provisioning: IdentityProvisioning, webhooks: WebhookService, bots: BotService,
            receipts: ReceiptService, background: [any Service] = [], recentWriters: (any RecentWriters)? = nil
        ) {
            self.recentWriters = recentWriters
            auth = AuthController(accounts: accounts, endpoint: endpoint)
            profile = ProfileController(accounts: accounts, users: users, sessions: sessions)
            self.blocks = BlocksController(service: blocks)
            self.privacy = PrivacyController(service: privacy)
            self.moderation = ModerationController(service: moderation, accounts: accounts, users: users)
            self.erasure = ErasureController(service: erasure, links: links)
            self.avatars = AvatarsController(service: avatars)
            self.search = SearchController(service: search)
            admin = AdminController(directory: directory)
            self.rooms = RoomsController(service: rooms, actions: messageActions)
            self.messageActions = MessageActionsController(service: messageActions)
            notifications = NotificationsController(rooms: rooms, settings: notificationSettings)
            self.files = FilesController(
                files: files, store: store, links: links, rooms: rooms,
                tokens: AccessTokens(sessions: sessions, cache: cache), mediaJobs: mediaJobs, uploadLimit: uploadLimit)
            webClient = WebClientController(endpoint: endpoint, fileBaseURL: links.baseURL)
            apiKeys = APIKeysController(keys: keys, audit: audit)
            serverKeys = ServerKeyMiddleware(keys: keys, audit: audit)
            server = ServerController(rooms: rooms, provisioning: provisioning, bots: bots, endpoint: endpoint)
            self.webhooks = WebhooksController(service: webhooks)
            self.bots = BotsController(service: bots, endpoint: endpoint, audit: audit)
            self.receipts = ReceiptsController(service: receipts)
            self.background = background
            self.keys = keys
            self.audit = audit
            self.sessions = sessions
            self.cache = cache
            self.links = links
        }
    }
}
