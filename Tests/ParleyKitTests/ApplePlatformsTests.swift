import Foundation
import ParleyTestSupport
import Testing

/// An app on iOS 16 or macOS 13 can add ParleyKit: what SwiftPM checks on Apple's platforms,
/// replayed here from the manifests (this machine builds for Linux only).
///
/// On Apple's platforms SwiftPM checks every target of the package graph, built or not: a
/// target's product dependency must not ask for a newer system than the target's package
/// declares. The server's targets take their products on Linux only, so what is left to check
/// is what ParleyKit and parley-chat use.
struct ApplePlatformsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let appleClientTargets: Set<String> = ["ParleyKit", "parley-chat"]
    static let applePlatforms = ["macos", "ios"]

    @Test func thePackageAsksForIOS16AndMacOS13AndNoProductForAppleAsksForMore() async throws {
        let root = try await Manifest.load(Self.packageRoot.path)
        #expect(root.minimum("macos") == [13, 0] && root.minimum("ios") == [16, 0])

        var dependencies: [String: Manifest] = [:]
        var tooNew: [String] = []
        for target in root.targets {
            for (product, package, platforms) in target.products {
                let onApple = Self.applePlatforms.filter { platforms?.contains($0) ?? true }
                guard !onApple.isEmpty else { continue }
                if dependencies[package] == nil {
                    let checkout = Self.packageRoot.appendingPathComponent(".build/checkouts/\(package)").path
                    dependencies[package] = try await Manifest.load(checkout)
                }
                for platform in onApple {
                    guard let needed = dependencies[package]?.minimum(platform),
                        let declared = root.minimum(platform), declared.lexicographicallyPrecedes(needed)
                    else { continue }
                    tooNew.append("\(target.name) → \(product) (\(package)) needs \(platform) \(needed)")
                }
            }
        }
        #expect(tooNew.isEmpty, "products newer than the package's minimums on Apple's platforms: \(tooNew)")
        let clients = root.targets.filter { Self.appleClientTargets.contains($0.name) }
        #expect(clients.count == 2)
        for target in clients {
            #expect(
                Set(target.targets).isSubset(of: Self.appleClientTargets),
                "\(target.name) builds on Apple's platforms and must not need a server target: \(target.targets)")
        }
    }

    /// Synchronization's Mutex and Atomic need macOS 15 and iOS 18; Glibc exists on Linux only.
    @Test func theClientSourcesUseNothingNewerThanTheirMinimumsOrLinuxOnly() throws {
        var offending: [String] = []
        for target in Self.appleClientTargets {
            let directory = Self.packageRoot.appendingPathComponent("Sources/\(target)")
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                var conditional = false
                for line in lines.map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    if line.hasPrefix("#if canImport(Glibc)") { conditional = true }
                    if line.hasPrefix("#endif") { conditional = false }
                    if line == "import Synchronization" || (line == "import Glibc" && !conditional) {
                        offending.append("\(file.lastPathComponent): \(line)")
                    }
                }
            }
        }
        #expect(offending.isEmpty, "\(offending)")
    }
}

/// What `swift package dump-package` says of a package: its minimums and its targets' dependencies.
struct Manifest: Decodable {
    struct Platform: Decodable {
        let platformName: String
        let version: String
    }

    struct Target: Decodable {
        let name: String
        let dependencies: [Dependency]

        /// Product dependencies as (product, package, platforms it applies on; nil for all).
        var products: [(product: String, package: String, platforms: [String]?)] {
            dependencies.compactMap { $0.product }
        }

        /// Targets of the same package it depends on.
        var targets: [String] { dependencies.compactMap { $0.target } }
    }

    /// `{"product": [name, package, aliases, condition]}`, `{"target": [name, condition]}` or
    /// `{"byName": [name, condition]}`.
    struct Dependency: Decodable {
        let product: (product: String, package: String, platforms: [String]?)?
        let target: String?

        struct Condition: Decodable {
            let platformNames: [String]?
        }

        enum Field: String, CodingKey { case product, target, byName }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Field.self)
            if var item = try? fields.nestedUnkeyedContainer(forKey: .product) {
                let name = try item.decode(String.self)
                let package = try item.decode(String?.self) ?? name
                _ = try item.decode([String: String]?.self)
                let condition = try item.decode(Condition?.self)
                product = (name, package, condition?.platformNames)
                target = nil
            } else {
                var item = try fields.nestedUnkeyedContainer(forKey: fields.contains(.target) ? .target : .byName)
                target = try item.decode(String.self)
                product = nil
            }
        }
    }

    let platforms: [Platform]
    let targets: [Target]

    /// The declared minimum on `platform`, as [major, minor]; nil when the package names none.
    func minimum(_ platform: String) -> [Int]? {
        platforms.first { $0.platformName == platform }.map { $0.version.split(separator: ".").compactMap { Int($0) } }
    }

    static func load(_ packagePath: String) async throws -> Manifest {
        let result = try await Subprocess.run(
            "/usr/bin/env",
            [
                "swift", "package", "--package-path", packagePath, "--scratch-path",
                TestScratch.path("parley-dump-package"), "dump-package",
            ], timeLimit: .seconds(120))
        guard result.status == 0 else {
            throw TestEnvironmentError("dump-package of \(packagePath): \(result.standardError)")
        }
        return try JSONDecoder().decode(Manifest.self, from: Data(result.standardOutput.utf8))
    }
}
