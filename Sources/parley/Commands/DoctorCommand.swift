import ArgumentParser

/// `parley doctor`: checks a configuration before anything starts, and says what to fix.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration: every setting, PostgreSQL and its migrations, Redis, the broker and "
            + "its plugin's key, the TLS files. Exits 1 when anything is wrong.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let settings = try await Settings.load(file: options.config)
        // The checks report failures themselves: the clients' retry chatter would only hide them.
        try Runtime.bootstrap(logLevel: .critical, json: false)
        var failed = false
        for await finding in Doctor(settings: settings).examine() {
            print(finding.line)
            failed = failed || !finding.passed
        }
        if failed { throw ExitCode(1) }
    }
}
