import Foundation
import Logging
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyTestSupport
import Testing

/// The same behaviour from both blob stores, against the real filesystem and PostgreSQL.
struct BlobStoreTests {
    enum Kind: String, CaseIterable { case filesystem, postgres }

    /// Runs `body` with a store of the kind (PostgreSQL: a fresh migrated database, small chunks).
    func withStore(_ kind: Kind, _ body: @escaping @Sendable (any BlobStore) async throws -> Void) async throws {
        switch kind {
        case .filesystem:
            let root = TestScratch.path("parley-blobs")
            defer { try? FileManager.default.removeItem(atPath: root) }
            try await body(try FilesystemBlobStore(root: root))
        case .postgres:
            let database = try await TestServices.shared().makeDatabase(migrated: true)
            let pool = PostgresPool(configuration: database, logger: .quiet)
            try await pool.withRunningClient { pool in
                try await body(PostgresBlobStore(database: pool, logger: .quiet, chunkSize: 1000))
            }
        }
    }

    static func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) } }

    func read(_ store: any BlobStore, _ key: String, _ range: Range<Int64>) async throws -> [UInt8] {
        let collected = Collected()
        try await store.read(key: key, range: range) { collected.append($0) }
        return collected.bytes
    }

    @Test(arguments: Kind.allCases) func aBlobIsReadWholeAndInRangesAfterItIsFinished(_ kind: Kind) async throws {
        try await withStore(kind) { store in
            let content = Self.bytes(5_000)
            let key = BlobKey.generate()
            let writer = try await store.makeWriter(key: key)
            for chunk in stride(from: 0, to: content.count, by: 777) {
                try await writer.write(content[chunk..<min(chunk + 777, content.count)])
            }
            // Not visible before it is finished.
            #expect(try await store.size(key: key) == nil)
            try await writer.finish()
            #expect(try await store.size(key: key) == 5_000)
            #expect(try await read(store, key, 0..<5_000) == content)
            #expect(try await read(store, key, 999..<2_001) == Array(content[999..<2_001]))
            #expect(try await read(store, key, 4_999..<5_000) == [content[4_999]])
            try await store.delete(key: key)
            #expect(try await store.size(key: key) == nil)
        }
    }

    @Test(arguments: Kind.allCases) func anAbortedOrAbandonedWriteLeavesNothing(_ kind: Kind) async throws {
        try await withStore(kind) { store in
            let key = BlobKey.generate()
            let writer = try await store.makeWriter(key: key)
            try await writer.write(Self.bytes(3_000)[...])
            await writer.abort()
            #expect(try await store.size(key: key) == nil)

            let abandoned = try await store.makeWriter(key: BlobKey.generate())
            try await abandoned.write(Self.bytes(10)[...])
            try await store.removeAbandoned(startedBefore: Date().addingTimeInterval(60))
            // An empty file and an empty blob are still blobs.
            let empty = BlobKey.generate()
            let emptyWriter = try await store.makeWriter(key: empty)
            try await emptyWriter.finish()
            #expect(try await store.size(key: empty) == 0)
        }
    }

    @Test(arguments: Kind.allCases) func writingAKeyAgainReplacesItsBlob(_ kind: Kind) async throws {
        try await withStore(kind) { store in
            let key = BlobKey.generate()
            for content in [Self.bytes(2_500), Array(Self.bytes(1_200).reversed())] {
                let writer = try await store.makeWriter(key: key)
                try await writer.write(content[...])
                try await writer.finish()
                #expect(try await read(store, key, 0..<Int64(content.count)) == content)
                #expect(try await store.size(key: key) == Int64(content.count))
            }
        }
    }

    @Test func filesystemKeysNeverBecomePaths() async throws {
        let root = TestScratch.path("parley-blobs")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try FilesystemBlobStore(root: root)
        for key in ["../../etc/passwd", "abc", "ABCDEF0123456789ABCD", "0123456789abcdef/../x"] {
            await #expect(throws: BlobStoreError.self) { _ = try await store.makeWriter(key: key) }
        }
    }
}

final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [UInt8] = []
    func append(_ bytes: ArraySlice<UInt8>) { lock.withLock { storage.append(contentsOf: bytes) } }
    var bytes: [UInt8] { lock.withLock { storage } }
}
