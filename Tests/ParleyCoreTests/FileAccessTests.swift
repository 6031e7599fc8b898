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

    @Test func aSignedURLOpensExactlyItsPathUntilItExpires() async throws {
        let path = FileLinks.contentPath(1)
        let url = try #require(URLComponents(string: links.signed(path)))
        let expires = try #require(url.queryItems?.first { $0.name == "expires" }?.value.flatMap { Int64($0) })
        let signature = try #require(url.queryItems?.first { $0.name == "signature" }?.value)
        #expect(try await access.signed(1, path: path, expires: expires, signature: signature).id == 1)
        for (otherPath, otherExpiry) in [(FileLinks.contentPath(2), expires), (path, expires + 1), (path, 1)] {
            let error = await #expect(throws: ParleyError.self) {
                try await access.signed(1, path: otherPath, expires: otherExpiry, signature: signature)
            }
            #expect(error?.code == .forbidden)
        }
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

    func letRead(fileID: Int64, userID: Int64) { readers.insert([fileID, userID]) }

    func create(_ file: NewFile) async throws -> StoredFile { throw ParleyError.unavailable("not in this fake") }
    func find(id: Int64) async throws -> StoredFile? { files[id] }
    func canRead(fileID: Int64, userID: Int64) async throws -> Bool {
        files[fileID]?.uploadedById == userID || readers.contains([fileID, userID])
    }
    func roomFiles(roomID: Int64, before: Int64?, limit: Int) async throws -> [StoredFile] { [] }
    func setMedia(fileID: Int64, _ details: MediaDetails) async throws {}
    func orphans(createdBefore cutoff: Date, limit: Int) async throws -> [StoredFile] { [] }
    func deleteOrphan(id: Int64) async throws -> StoredFile? { nil }
}
