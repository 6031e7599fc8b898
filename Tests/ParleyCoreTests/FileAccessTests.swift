import Foundation
import ParleyCore
import Testing

/// Who may read a file, over in-memory fakes: the same decision for every way a file is opened.
struct FileAccessTests {
    let links = FileLinks(deriveFrom: Array(repeating: 9, count: 32))
    let files = InMemoryFiles(files: [
        file(id: 1, by: 10, protected: true), file(id: 2, by: 10, protected: false),
    ])
    let rooms = RoomRoles(readers: [(room: 5, user: 20)])
    var access: FileAccess { FileAccess(files: files, links: links, rooms: rooms) }

    static func file(id: Int64, by uploader: Int64, protected: Bool) -> StoredFile {
        StoredFile(
            id: id, uploadedById: uploader, name: "plan v2.pdf", fileExtension: "pdf", size: 10,
            mimeType: "application/pdf", checksum: [], isProtected: protected, submitted: true, storageKey: "k\(id)",
            width: nil, height: nil, durationMs: nil, thumbnailSmallKey: nil, thumbnailLargeKey: nil,
            createdAt: Date())
    }

    @Test func theUploaderAndReadersOfItsRoomsReadItAndNobodyElseLearnsItExists() async throws {
        await files.letRead(fileID: 1, userID: 20)
        #expect(try await access.readable(1, by: 10).id == 1)
        #expect(try await access.readable(1, by: 20).id == 1)
        for (fileID, userID) in [(Int64(1), Int64(30)), (99, 10)] {
            let error = await #expect(throws: ParleyError.self) { try await access.readable(fileID, by: userID) }
            #expect(error?.code == .notFound)
        }
    }

    /// The parts of a signed URL.
    static func parts(_ link: String) throws -> (path: String, expires: Int64, viewer: Int64?, signature: String) {
        let url = try #require(URLComponents(string: link))
        let query = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        return (
            url.path, try #require(query["expires"].flatMap { Int64($0) }), query["viewer"].flatMap { Int64($0) },
            try #require(query["signature"])
        )
    }

    @Test func aSignedURLOpensExactlyItsPathForItsViewerUntilItExpires() async throws {
        await files.letRead(fileID: 1, userID: 20)
        let path = FileLinks.contentPath(1)
        let (_, expires, viewer, signature) = try Self.parts(links.signed(path, viewer: 20))
        #expect(viewer == 20)
        #expect(try await access.signed(1, path: path, expires: expires, viewer: 20, signature: signature).id == 1)
        let others: [(String, Int64, Int64?)] = [
            (FileLinks.contentPath(2), expires, 20), (path, expires + 1, 20), (path, 1, 20),
            // Another viewer, or none: the signature covers who it is for.
            (path, expires, 10), (path, expires, nil),
        ]
        for (otherPath, otherExpiry, otherViewer) in others {
            let error = await #expect(throws: ParleyError.self) {
                try await access.signed(
                    1, path: otherPath, expires: otherExpiry, viewer: otherViewer, signature: signature)
            }
            #expect(error?.code == .forbidden)
        }
    }

    @Test func aLinkOpensOnlyWhileItsViewerMayReadTheFile() async throws {
        await files.letRead(fileID: 1, userID: 20)
        let path = FileLinks.contentPath(1)
        let (_, expires, _, signature) = try Self.parts(links.signed(path, viewer: 20))
        #expect(try await access.signed(1, path: path, expires: expires, viewer: 20, signature: signature).id == 1)
        // Removed from the room, or the message deleted: the same rule as a token, at once.
        await files.stopReading(fileID: 1, userID: 20)
        let error = await #expect(throws: ParleyError.self) {
            try await access.signed(1, path: path, expires: expires, viewer: 20, signature: signature)
        }
        #expect(error?.code == .notFound)
        // The uploader's own link stays theirs.
        let own = try Self.parts(links.signed(path, viewer: 10))
        #expect(try await access.signed(1, path: path, expires: own.1, viewer: 10, signature: own.3).id == 1)
    }

    @Test func aLinkNamingNoViewerOpensOnlyADataExport() async throws {
        let export = try Self.parts(links.signed(FileLinks.contentPath(1), expiresAt: Date().addingTimeInterval(60)))
        #expect(export.viewer == nil)
        let error = await #expect(throws: ParleyError.self) {
            try await access.signed(
                1, path: export.path, expires: export.expires, viewer: nil, signature: export.signature)
        }
        #expect(error?.code == .notFound)
        await files.markExport(fileID: 1)
        #expect(
            try await access.signed(
                1, path: export.path, expires: export.expires, viewer: nil, signature: export.signature
            ).id == 1)
    }

    @Test func linksLastAnHourUnlessConfigured() throws {
        #expect(links.lifetime == .seconds(3_600))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let (_, expires, _, _) = try Self.parts(links.signed(FileLinks.contentPath(1), viewer: 20, now: now))
        #expect(expires == 1_800_003_600)
        let short = FileLinks(deriveFrom: Array(repeating: 9, count: 32), lifetime: .seconds(5))
        let (path, soon, _, signature) = try Self.parts(short.signed(FileLinks.contentPath(1), viewer: 20, now: now))
        #expect(soon == 1_800_000_005)
        #expect(short.verify(path: path, expires: soon, viewer: 20, signature: signature, now: now))
        #expect(!short.verify(path: path, expires: soon, viewer: 20, signature: signature, now: now + 6))
    }

    @Test func aFileObjectIsSignedForWhomItIsEncodedAndUnsignedForNoOne() throws {
        let stored = StoredFile(
            id: 1, uploadedById: 10, name: "p.jpg", fileExtension: "jpg", size: 10, mimeType: "image/jpeg",
            checksum: [], isProtected: true, submitted: true, storageKey: "k1", width: 1, height: 1,
            durationMs: nil, thumbnailSmallKey: "s", thumbnailLargeKey: "l", createdAt: Date())
        let object = links.object(stored)
        let shared = try JSONCoding.decoder.decode(FileObject.self, from: JSONCoding.encoder.encode(object))
        #expect(shared.url == "/v1/files/1/content")
        #expect(shared.thumbnails.small == "/v1/files/1/thumbnails/small")
        #expect(shared.thumbnails.large == "/v1/files/1/thumbnails/large")

        let encoder = FileViewer(links: links, userID: 20).encoder()
        let forViewer = try JSONCoding.decoder.decode(FileObject.self, from: encoder.encode(object))
        for (link, path) in [
            (forViewer.url, FileLinks.contentPath(1)),
            (try #require(forViewer.thumbnails.small), FileLinks.thumbnailPath(1, .small)),
            (try #require(forViewer.thumbnails.large), FileLinks.thumbnailPath(1, .large)),
        ] {
            let parts = try Self.parts(link)
            #expect(parts.path == path && parts.viewer == 20)
            #expect(links.verify(path: path, expires: parts.expires, viewer: 20, signature: parts.signature))
        }
        // A public file's own link needs no signature.
        let published = links.object(Self.file(id: 2, by: 10, protected: false))
        let open = try JSONCoding.decoder.decode(FileObject.self, from: encoder.encode(published))
        #expect(open.url == "/v1/public/files/2/plan%20v2.pdf")
    }

    @Test func aPublicLinkOpensOnlyAnUnprotectedFileByItsName() async throws {
        #expect(try await access.published(2, name: "plan v2.pdf").id == 2)
        #expect(try await access.published(2, name: "plan%20v2.pdf").id == 2)
        for (fileID, name) in [(Int64(2), "other.pdf"), (1, "plan v2.pdf"), (99, "plan v2.pdf")] {
            let error = await #expect(throws: ParleyError.self) { try await access.published(fileID, name: name) }
            #expect(error?.code == .notFound)
        }
    }

    @Test func aRoomsFilesAreListedForItsReadersOnly() async throws {
        #expect(try await access.roomFiles(roomID: 5, by: 20, before: nil, limit: 10).isEmpty)
        let error = await #expect(throws: ParleyError.self) {
            try await access.roomFiles(roomID: 5, by: 30, before: nil, limit: 10)
        }
        #expect(error?.code == .notFound)
    }
}

struct RoomRoles: RoomRoleCheck {
    let readers: [(room: Int64, user: Int64)]

    func require(_ minimum: RoomRole, roomID: Int64, userID: Int64) async throws -> RoomRole {
        guard readers.contains(where: { $0 == (roomID, userID) }), minimum == .reader else {
            throw ParleyError.notFound()
        }
        return .reader
    }
}

actor InMemoryFiles: FileRepository {
    private var files: [Int64: StoredFile]
    private var readers: Set<[Int64]> = []

    init(files: [StoredFile]) { self.files = Dictionary(uniqueKeysWithValues: files.map { ($0.id, $0) }) }

    private var exports: Set<Int64> = []

    func letRead(fileID: Int64, userID: Int64) { readers.insert([fileID, userID]) }
    func stopReading(fileID: Int64, userID: Int64) { readers.remove([fileID, userID]) }
    func markExport(fileID: Int64) { exports.insert(fileID) }

    func create(_ file: NewFile) async throws -> StoredFile { throw ParleyError.unavailable("not in this fake") }
    func find(id: Int64) async throws -> StoredFile? { files[id] }
    func canRead(fileID: Int64, userID: Int64) async throws -> Bool {
        files[fileID]?.uploadedById == userID || readers.contains([fileID, userID])
    }
    func isDataExport(fileID: Int64) async throws -> Bool { exports.contains(fileID) }
    func roomFiles(roomID: Int64, before: Int64?, limit: Int) async throws -> [StoredFile] { [] }
    func setMedia(fileID: Int64, _ details: MediaDetails) async throws {}
    func orphans(createdBefore cutoff: Date, publicCreatedBefore publicCutoff: Date, limit: Int) async throws
        -> [StoredFile]
    { [] }
    func storedBytes(uploadedBy userID: Int64) async throws -> Int64 {
        files.values.filter { $0.uploadedById == userID }.reduce(0) { $0 + $1.size }
    }
    func deleteOrphan(id: Int64) async throws -> StoredFile? { nil }
}
