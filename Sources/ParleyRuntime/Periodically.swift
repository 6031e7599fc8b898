import ServiceLifecycle

/// The loop of a service that does something every so often (a sweep, a measurement) until
/// the process shuts down.
public enum Periodically {
    /// Runs `pass` now and then every `interval` until graceful shutdown or cancellation. The
    /// wait ends at once when shutdown begins, not after the interval; `pass` handles its own
    /// failures (a failed sweep is tried again next time).
    public static func run(every interval: Duration, _ pass: () async -> Void) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await pass()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
