import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// A 50 MiB upload to the real `parley serve`, for both stores: the content arrives intact
/// and the server's resident memory stays flat (it streams, it does not buffer).
struct UploadMemoryTests {
    static let size = 50 * 1024 * 1024

    static func residentBytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    @Test(arguments: ["filesystem", "postgres"])
    func aLargeUploadStreamsWithFlatMemory(store: String) async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let directory = TestScratch.path("parley-upload")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var parley = ParleyCommand(database: database, services: services)
        parley = ParleyCommand(
            environment: parley.environment.merging([
                "PARLEY_FILES_STORE": store, "PARLEY_FILES_DIRECTORY": "\(directory)/files",
            ]) { $1 })

        // The content and its checksum come from child programs: making 50 MiB byte by byte in
        // an unoptimised build held both of Swift concurrency's threads for 17 s, and every
        // other test of the process stood still (broker ACL calls timed out into denials).
        let source = "\(directory)/big.bin"
        let made = try await Subprocess.run("/bin/sh", ["-c", "head -c \(Self.size) /dev/urandom > '\(source)'"])
        try #require(made.status == 0, "\(made.standardError)")
        let summed = try await Subprocess.run("/usr/bin/sha256sum", [source])
        let checksum = String(summed.standardOutput.prefix(64))
        try #require(checksum.count == 64, "\(summed.standardError)")

        let stack = try await LiveStack.start(parley, worker: false)
        try await stack.stopping {
            let pid = try #require(stack.serve).pid
            let base = stack.base
            /// The answer as the API's own type.
            func curl<Answer: Decodable>(_ type: Answer.Type, _ arguments: [String]) async throws -> Answer {
                let result = try await Subprocess.run("/usr/bin/curl", ["-s", "--max-time", "120"] + arguments)
                return try JSONCoding.decoder.decode(Answer.self, from: Data(result.standardOutput.utf8))
            }
            let json = ["-H", "Content-Type: application/json"]
            _ = try await curl(
                UserResponse.self,
                json + [
                    "-d", #"{"email":"big@example.com","password":"correct horse","firstName":"B","lastName":"U"}"#,
                    "\(base)/v1/auth/register",
                ])
            let login = try await curl(
                LoginResponse.self,
                json + ["-d", #"{"email":"big@example.com","password":"correct horse"}"#, "\(base)/v1/auth/login"])
            let token = login.accessToken

            let before = Self.residentBytes(pid)
            let peak = PeakMemory()
            let sampling = Task {
                while !Task.isCancelled {
                    peak.record(Self.residentBytes(pid))
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
            // Not thrown before the sampling ends: a failed upload shows below.
            let created = try? await curl(
                FileObject.self,
                [
                    "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H",
                    "Content-Type: application/octet-stream",
                    "--data-binary", "@\(source)", "\(base)/v1/files?name=big.bin",
                ])
            sampling.cancel()
            _ = await sampling.value
            let growth = peak.value - before
            print(
                "upload of 50 MiB to the \(store) store: server RSS \(before >> 20) MiB before, peak growth \(growth >> 20) MiB"
            )
            #expect(created?.size == Int64(Self.size), "\(String(describing: created))")
            #expect(created?.checksum == "sha256:\(checksum)")
            // Buffering the upload would add 50 MiB or more; streaming adds a few chunks.
            #expect(growth < 24 << 20, "the server grew by \(growth >> 20) MiB during a 50 MiB upload")

            // And it comes back whole.
            let id = try #require(created?.id)
            let download = try await Subprocess.run(
                "/usr/bin/sh",
                [
                    "-c",
                    "curl -s --max-time 120 -H 'Authorization: Bearer \(token)' \(base)/v1/files/\(id)/content | sha256sum",
                ])
            #expect(download.standardOutput.hasPrefix(checksum))
        }
    }
}

final class PeakMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    func record(_ value: Int) { lock.withLock { peak = max(peak, value) } }
    var value: Int { lock.withLock { peak } }
}
