import ArgumentParser
import NIOCore
import NIOPosix

/// `parley`: the one executable of the server.
@main
struct Parley: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Parley: an MQTT-backed instant-messaging server.",
        discussion: SettingKeys.helpText,
        subcommands: [
            ServeCommand.self, WorkerCommand.self, MigrateCommand.self, UserCommand.self, GroupCommand.self,
            RoleCommand.self, DoctorCommand.self,
        ]
    )

    /// Swift concurrency's jobs run on NIO's event loops, where sockets are read and written, so
    /// a request no longer crosses threads twice (<doc:ConcurrencyOnTheEventLoops>). Installed
    /// before the command starts any task.
    static func main() async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        await main(nil)
    }
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "A file of PARLEY_*=value lines (default: $PARLEY_CONFIG_FILE).")
    var config: String?

    /// Loads configuration and bootstraps logging once per process.
    func settings() async throws -> Settings {
        let settings = try await Settings.load(file: config)
        try Runtime.bootstrap(logLevel: settings.logLevel(), json: settings.logsJSON())
        return settings
    }
}
