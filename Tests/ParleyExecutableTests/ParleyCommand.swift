import Foundation
import ParleyPostgres
import ParleyTestSupport

/// The built `parley` executable, configured through the environment as an operator would.
struct ParleyCommand {
    let environment: [String: String]
    /// The MQTT token key every process gets (`PARLEY_MQTT_TOKEN_KEY`), and a plugin broker too.
    static let tokenKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

    static var binary: String {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["PARLEY_TEST_BINARY"] else {
                throw TestEnvironmentError("PARLEY_TEST_BINARY is not set: run the tests with deploy/local/test")
            }
            return path
        }
    }

    /// Settings for the shared services and the given database, every listener on a free port.
    init(database: PostgresConfiguration, services: TestServices) {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLEY_") }
        environment.merge([
            "PARLEY_TEST_BINARY": "",
            "PARLEY_POSTGRES_PORT": String(database.port),
            "PARLEY_POSTGRES_PASSWORD": database.password ?? "",
            "PARLEY_POSTGRES_DATABASE": database.database,
            "PARLEY_POSTGRES_TLS": "disable",
            "PARLEY_REDIS_PORT": String(services.port("REDIS")),
            "PARLEY_REDIS_PASSWORD": services.secret("REDIS"),
            "PARLEY_MQTT_PORT": String(services.port("MQTT")),
            "PARLEY_MQTT_USERNAME": "parley-server",
            "PARLEY_MQTT_PASSWORD": services.secret("MQTT"),
            "PARLEY_HTTP_PORT": "0",
            "PARLEY_HTTPS_PORT": "0",
            "PARLEY_TLS_CERTIFICATE": services.certificatePath,
            "PARLEY_TLS_KEY": services.keyPath,
            "PARLEY_INTERNAL_PORT": "0",
            "PARLEY_WORKER_INTERNAL_PORT": "0",
            "PARLEY_MIGRATIONS_DIRECTORY": TestServices.migrationsDirectory.path,
            "PARLEY_BCRYPT_COST": "4",
            "PARLEY_MQTT_TOKEN_KEY": Self.tokenKey,
            // The key of every test plugin broker's sender stamps (PluginBroker.stampKeyBase64).
            "PARLEY_MQTT_STAMP_KEY": PluginBroker.stampKeyBase64,
            // The tests' users send in bursts; the limits' defaults have tests of their own.
            "PARLEY_LIMIT_MESSAGES_PER_SECOND": "1000000", "PARLEY_LIMIT_MESSAGES_BURST": "1000000",
            "PARLEY_LIMIT_ROOMS_PER_HOUR": "1000000", "PARLEY_LIMIT_MEMBERS_PER_HOUR": "100000000",
            "PARLEY_LIMIT_UPLOADS_PER_DAY": "100000000",
            // Uploads and media work files in the test's own directory, never the checkout.
            "PARLEY_FILES_DIRECTORY": TestScratch.path("parley-files"),
        ]) { $1 }
        self.environment = environment
    }

    func run(_ arguments: String..., input: String? = nil) async throws -> Subprocess.Result {
        try await Subprocess.run(Self.binary, arguments, input: input, environment: environment)
    }

    /// Starts a long-running subcommand; its output goes to `log`.
    func start(_ arguments: String..., log: String) throws -> Int32 {
        try Subprocess.start(Self.binary, arguments, environment: environment, outputFile: log)
    }
}
