import Foundation
import Logging
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import ServiceLifecycle
import Testing

/// The `media` role with the real tools (libvips, ffmpeg) on generated pictures and video,
/// and the orphan sweep, against real PostgreSQL, Redis and a filesystem store.
struct MediaWorkerTests {
    /// Fixtures made by the tools themselves: nothing binary lives in the repository.
    static func fixture(_ name: String, in directory: String) async throws -> String {
        let path = "\(directory)/\(name)"
        func run(_ tool: String, _ arguments: [String]) async throws {
            let result = try await Subprocess.run(tool, arguments)
            guard result.status == 0 else { throw TestEnvironmentError("\(tool) failed: \(result.standardError)") }
        }
        let ffmpeg = ["-nostdin", "-v", "error", "-y"]
        switch name {
        case "wide.jpg":
            try await run(
                "/usr/bin/ffmpeg",
                ffmpeg + [
                    "-f", "lavfi", "-i", "testsrc=size=2000x1000", "-frames:v", "1", "-f", "image2", "-update", "1",
                    path,
                ])
        case "turned.png":
            // 400×200 whose EXIF orientation 6 turns it upright as 200×400.
            try await run(
                "/usr/bin/ffmpeg",
                ffmpeg + [
                    "-f", "lavfi", "-i", "color=c=red:s=400x200", "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "image2",
                    "-update", "1", path,
                ])
            try await run("/usr/bin/exiftool", ["-q", "-overwrite_original", "-Orientation#=6", path])
        case "portrait.mp4":
            // A 320×240 clip with the display matrix of a phone held upright.
            let plain = "\(directory)/plain.mp4"
            try await run(
                "/usr/bin/ffmpeg",
                ffmpeg + [
                    "-f", "lavfi", "-i", "testsrc=duration=1:size=320x240:rate=10", "-c:v", "libx264", "-pix_fmt",
                    "yuv420p", plain,
                ])
            try await run(
                "/usr/bin/ffmpeg", ffmpeg + ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=270", path])
        case "corrupt.jpg":
            var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
            bytes += (0..<5000).map { _ in UInt8.random(in: 0...255) }
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
        default:
            throw TestEnvironmentError("no fixture \(name)")
        }
        return path
    }

    /// Width and height of a JPEG, read by libvips.
    static func size(ofJPEG bytes: [UInt8], in directory: String) async throws -> (Int, Int) {
        let path = "\(directory)/check-\(UUID().uuidString).jpg"
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let result = try await Subprocess.run("/usr/bin/vipsheader", ["-a", path])
        var fields: [String: Int] = [:]
        for line in result.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, let value = Int(parts[1]) { fields[parts[0]] = value }
        }
        #expect(Array(bytes.prefix(3)) == [0xFF, 0xD8, 0xFF])
        return (fields["width"] ?? 0, fields["height"] ?? 0)
    }

    struct Setup: Sendable {
        let files: PostgresFileRepository
        let store: FilesystemBlobStore
        let userID: Int64
        let directory: String
        let database: PostgresPool

        func upload(_ path: String, mimeType: String, name: String) async throws -> StoredFile {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let key = BlobKey.generate()
            let writer = try await store.makeWriter(key: key)
            try await writer.write(bytes[...])
            try await writer.finish()
            return try await files.create(
                NewFile(
                    uploadedById: userID, name: name, fileExtension: "", size: Int64(bytes.count), mimeType: mimeType,
                    checksum: Array(repeating: 0, count: 32), isProtected: true, storageKey: key))
        }

        func blob(_ key: String?) async throws -> [UInt8] {
            guard let key, let size = try await store.size(key: key) else { return [] }
            let collected = Collected()
            try await store.read(key: key, range: 0..<size) { collected.append($0) }
            return collected.bytes
        }
    }

    func withSetup(_ body: @escaping @Sendable (Setup) async throws -> Void) async throws {
        let directory = TestScratch.path("parley-media")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = try await TestServices.shared().makeDatabase(migrated: true)
        let pool = PostgresPool(configuration: configuration, logger: .quiet)
        try await pool.withRunningClient { pool in
            let userID = try await pool.client.query(
                """
                INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
                VALUES ('media@example.com', 'M', 'W', 'x') RETURNING id
                """, logger: .quiet
            ).single(Int64.self)
            try await body(
                Setup(
                    files: PostgresFileRepository(database: pool, logger: .quiet),
                    store: try FilesystemBlobStore(root: "\(directory)/store"), userID: userID,
                    directory: directory, database: pool))
        }
    }

    @Test func picturesAndVideosGetSizesAndThumbnailsThatRespectOrientation() async throws {
        try await withSetup { setup in
            let handler = MediaHandler(
                files: setup.files, store: setup.store, processor: ToolMediaProcessor(), workRoot: setup.directory,
                logger: .quiet)
            let cases: [(fixture: String, type: String, size: (Int, Int), small: (Int, Int), large: (Int, Int))] = [
                ("wide.jpg", "image/jpeg", (2000, 1000), (320, 160), (1280, 640)),
                ("turned.png", "image/png", (200, 400), (160, 320), (200, 400)),
                ("portrait.mp4", "video/mp4", (240, 320), (240, 320), (240, 320)),
            ]
            for item in cases {
                let path = try await Self.fixture(item.fixture, in: setup.directory)
                let file = try await setup.upload(path, mimeType: item.type, name: item.fixture)
                try await handler.handle(MediaJob(fileID: file.id).json())
                let done = try #require(try await setup.files.find(id: file.id))
                #expect(done.width == item.size.0 && done.height == item.size.1, "\(item.fixture)")
                let small = try await Self.size(
                    ofJPEG: try await setup.blob(done.thumbnailSmallKey), in: setup.directory)
                let large = try await Self.size(
                    ofJPEG: try await setup.blob(done.thumbnailLargeKey), in: setup.directory)
                #expect(small == item.small, "\(item.fixture) small")
                #expect(large == item.large, "\(item.fixture) large")
                if item.type == "video/mp4" {
                    #expect((900...1100).contains(done.durationMs ?? 0), "duration \(done.durationMs ?? -1)")
                }
            }
        }
    }

    @Test func aCorruptImageFailsItsJobAndTheWorkerGoesOn() async throws {
        try await withSetup { setup in
            let handler = MediaHandler(
                files: setup.files, store: setup.store, processor: ToolMediaProcessor(), workRoot: setup.directory,
                logger: .quiet)
            let corrupt = try await setup.upload(
                try await Self.fixture("corrupt.jpg", in: setup.directory), mimeType: "image/jpeg", name: "bad.jpg")
            let good = try await setup.upload(
                try await Self.fixture("wide.jpg", in: setup.directory), mimeType: "image/jpeg", name: "good.jpg")
            let pool = RedisConnectionPool(configuration: try TestServices.shared().redis(), logger: .quiet)
            let queue = RedisJobQueue(
                name: "media-\(UUID().uuidString.prefix(8))", pool: pool,
                configuration: .init(visibilityTimeout: .seconds(5), blockFor: .milliseconds(100)))
            try await queue.enqueue(MediaJob(fileID: corrupt.id).json())
            try await queue.enqueue(MediaJob(fileID: good.id).json())
            let consumer = JobConsumer(queue: queue, consumer: "media", logger: .quiet, handler: handler.handle)
            let group = ServiceGroup(configuration: .init(services: [.init(service: consumer)], logger: .quiet))
            let running = Task { try await group.run() }
            for _ in 0..<300 {
                if try await setup.files.find(id: good.id)?.thumbnailSmallKey != nil,
                    try await queue.deadLetters().count == 1
                {
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(try await queue.deadLetters() == [MediaJob(fileID: corrupt.id).json()])
            #expect(try await setup.files.find(id: corrupt.id)?.thumbnailSmallKey == nil)
            #expect(try await setup.files.find(id: good.id)?.width == 2000)
        }
    }

    @Test func anUploadNoMessageTookIsRemovedAfterTheGracePeriod() async throws {
        try await withSetup { setup in
            let path = try await Self.fixture("corrupt.jpg", in: setup.directory)
            let orphan = try await setup.upload(path, mimeType: "image/jpeg", name: "orphan.jpg")
            let attached = try await setup.upload(path, mimeType: "image/jpeg", name: "kept.jpg")
            let recent = try await setup.upload(path, mimeType: "image/jpeg", name: "recent.jpg")
            try await setup.database.client.query(
                """
                UPDATE cloud.file SET created_at = now() - interval '2 days' WHERE id IN (\(orphan.id), \(attached.id))
                """, logger: .quiet)
            try await setup.database.client.query(
                "UPDATE cloud.file SET submitted = true WHERE id = \(attached.id)", logger: .quiet)
            let sweeper = OrphanSweeper(files: setup.files, store: setup.store, grace: .seconds(86_400), logger: .quiet)
            #expect(try await sweeper.sweep() == 1)
            #expect(try await setup.files.find(id: orphan.id) == nil)
            #expect(try await setup.store.size(key: orphan.storageKey) == nil)
            #expect(try await setup.files.find(id: attached.id) != nil)
            #expect(try await setup.store.size(key: attached.storageKey) != nil)
            #expect(try await setup.files.find(id: recent.id) != nil)
        }
    }
}
