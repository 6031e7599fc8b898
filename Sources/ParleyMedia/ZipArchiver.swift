import ParleyCore

/// Info-ZIP's `zip` (Debian's `zip`), run under the tool runner's limits: deflate and ZIP64
/// for exports of any size, without a compression library in the worker.
public struct ZipArchiver: Archiver {
    let runner: ToolRunner

    public init(runner: ToolRunner) {
        self.runner = runner
    }

    public func zip(directory: String, into path: String) async throws {
        // `zip` stores paths as given: it runs in the directory. The paths are arguments of
        // the script, never part of it.
        try await runner.run(
            "/bin/sh", ["-c", "cd \"$1\" && exec zip -q -r -X \"$2\" .", "parley-zip", directory, path])
    }
}
