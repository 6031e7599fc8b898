import Foundation

/// Where tests put their files: inside the run's work directory, which `deploy/local/test`
/// removes at the end, so no run leaves files behind in `/tmp` (6,240 upload directories had
/// piled up there on a machine that ran the suite all day).
public enum TestScratch {
    /// A new path, not yet created, named `name-<8 hex digits><suffix>` (short: some hold a
    /// server's Unix socket, whose path may not exceed 107 bytes).
    public static func path(_ name: String, suffix: String = "") -> String {
        let work = ProcessInfo.processInfo.environment["PARLEY_TEST_WORK_DIR"] ?? NSTemporaryDirectory()
        return "\(work)/\(name)-\(UUID().uuidString.prefix(8))\(suffix)"
    }
}
