import Foundation
import Glibc

/// The machine's claims on ports, kept as `deploy/local/services` keeps them (its
/// `claim_port`): a directory per port, its `owner` naming the instance's directory or, here,
/// `pid:N` for this test process. A port whose server is down a moment (a test restarting its
/// broker) looks free; the claim keeps every other stack, script and test off it. A claim
/// lapses once its owner is gone, or after six hours.
public enum PortClaims {
    public static var directory: String {
        let environment = ProcessInfo.processInfo.environment
        return environment["PARLEY_PORT_CLAIMS_DIR"] ?? "\(environment["TMPDIR"] ?? "/tmp")/parley-port-claims"
    }

    /// Claims `port` for this process; false when another owner holds it.
    public static func claim(_ port: Int, in directory: String = directory) -> Bool {
        if mkdir(directory, 0o1777) == 0 { chmod(directory, 0o1777) }
        let claim = "\(directory)/\(port)"
        if mkdir(claim, 0o755) != 0 {
            guard lapsed(claim) else { return false }
            try? FileManager.default.removeItem(atPath: claim)
            guard mkdir(claim, 0o755) == 0 else { return false }
        }
        return FileManager.default.createFile(atPath: "\(claim)/owner", contents: Data("pid:\(getpid())\n".utf8))
    }

    private static func lapsed(_ claim: String) -> Bool {
        let made = (try? FileManager.default.attributesOfItem(atPath: claim))?[.modificationDate] as? Date
        let age = made.map { Date().timeIntervalSince($0) } ?? 0
        if age > 6 * 3600 { return true }
        let owner = ((try? String(contentsOfFile: "\(claim)/owner", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // Left half-made (its maker died between the two steps).
        if owner.isEmpty { return age > 60 }
        if owner.hasPrefix("pid:") { return !FileManager.default.fileExists(atPath: "/proc/\(owner.dropFirst(4))") }
        return !FileManager.default.fileExists(atPath: owner)
    }
}
