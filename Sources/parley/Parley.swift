import ArgumentParser

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
