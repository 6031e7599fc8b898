import ArgumentParser

/// `parley-load`: drives Parley and its dependencies with load and prints figures.
@main
struct ParleyLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley-load", abstract: "Load generator and benchmarks for Parley.",
        subcommands: [ChatBenchmark.self, RestBenchmark.self, FanoutBenchmark.self, PushBenchmark.self, ChaosLoad.self])
}
