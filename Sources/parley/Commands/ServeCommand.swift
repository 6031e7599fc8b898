import ArgumentParser
import ParleyAPI
import ParleyCore
import ParleyPostgres
import ParleyRedis

/// `parley serve`: the REST API over TLS (h2, http/1.1) and cleartext (http/1.1, h2c), and
/// the internal listener.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the HTTP API until SIGTERM or SIGINT; in-flight requests finish first.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let settings = try await options.settings()
        try await Runtime.verifySchema(settings)
        let logger = Runtime.logger("serve")
        let dependencies = try Dependencies(settings: settings, role: "serve")
        let api = APIServer(
            configuration: try settings.http(), probes: dependencies.probes, registry: Runtime.metrics,
            logger: Runtime.logger("http"))
        let accounts = try AccountsWiring(settings: settings, dependencies: dependencies)
        let fileLinks = try settings.fileLinks()
        let roomRepository = PostgresRoomRepository(
            database: dependencies.postgres, logger: Runtime.logger("rooms"), fileLinks: fileLinks)
        let roomService = RoomService(rooms: roomRepository, batching: try settings.sendBatching())
        let rooms = RoomsController(service: roomService)
        let notifications = NotificationsController(
            rooms: roomService,
            settings: PostgresPushRepository(database: dependencies.postgres, logger: Runtime.logger("push")))
        let files = FilesController(
            files: PostgresFileRepository(database: dependencies.postgres, logger: Runtime.logger("files")),
            store: try settings.blobStore(database: dependencies.postgres), links: fileLinks, rooms: roomService,
            tokens: accounts.api.accessTokens,
            mediaJobs: RedisJobQueue(name: "media", pool: dependencies.redis, configuration: try settings.jobQueue()),
            uploadLimit: try settings.uploadLimit())
        let router = api.publicRouter { router in
            accounts.api.addRoutes(to: router) { group in
                rooms.addRoutes(to: group)
                notifications.addRoutes(to: group)
                files.addSignedInRoutes(to: group)
            }
            files.addContentRoutes(to: router)
        }
        let broker = BrokerAuthController(
            authority: BrokerAuthority(
                key: try settings.mqttTokenKey(), server: try settings.serverIdentity(),
                sessions: PostgresSessionRepository(
                    database: dependencies.postgres, logger: Runtime.logger("sessions")),
                rooms: roomRepository))
        let internalRouter = api.internalRouter { broker.addRoutes(to: $0) }
        let listeners = try api.services(publicRouter: router, internalRouter: internalRouter) { listener, port in
            logger.notice("listening", metadata: ["listener": "\(listener.rawValue)", "port": "\(port)"])
        }
        try await dependencies.run(with: [accounts.revocationListener] + listeners, logger: logger)
    }
}
