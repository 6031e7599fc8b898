import Foundation
import Logging
import ParleyCore
import PostgresNIO

/// Blobs in PostgreSQL as rows of 1 MiB chunks (`cloud.blob`, `cloud.blob_chunk`), so API
/// nodes share content without a shared disk. Reads fetch at most one chunk per query (only
/// the slice a range needs), so a download holds about one chunk whatever the file's size.
public struct PostgresBlobStore: BlobStore {
    let database: PostgresPool
    let logger: Logger
    let chunkSize: Int

    public init(database: PostgresPool, logger: Logger, chunkSize: Int = 1024 * 1024) {
        self.database = database
        self.logger = logger
        self.chunkSize = chunkSize
    }

    public func makeWriter(key: String) async throws -> any BlobWriter {
        // Writing a key again replaces its blob (a retried media job rewrites its thumbnails).
        try await database.client.query(
            """
            INSERT INTO cloud.blob (key, chunk_size) VALUES (\(key), \(Int32(chunkSize)))
            ON CONFLICT (key) DO UPDATE
            SET size = 0, complete = false, chunk_size = excluded.chunk_size, created_at = now()
            """, logger: logger)
        try await database.client.query("DELETE FROM cloud.blob_chunk WHERE blob_key = \(key)", logger: logger)
        return PostgresBlobWriter(store: self, key: key)
    }

    public func size(key: String) async throws -> Int64? {
        try await database.client.query(
            "SELECT size FROM cloud.blob WHERE key = \(key) AND complete", logger: logger
        ).first(Int64.self)
    }

    public func read(key: String, range: Range<Int64>, into body: (ArraySlice<UInt8>) async throws -> Void)
        async throws
    {
        guard !range.isEmpty else { return }
        let stored = try await database.client.query(
            "SELECT chunk_size FROM cloud.blob WHERE key = \(key) AND complete", logger: logger
        ).first(Int32.self)
        guard let stored else { throw ParleyError.notFound("No such content.") }
        let size = Int64(stored)
        for index in (range.lowerBound / size)...((range.upperBound - 1) / size) {
            let start = max(range.lowerBound - index * size, 0)
            let end = min(range.upperBound - index * size, size)
            // Chunks are stored uncompressed (STORAGE EXTERNAL), so substring reads only the
            // slice a range needs; whole chunks are read as they are.
            let whole = start == 0 && end == size
            let data = try await database.client.query(
                """
                SELECT CASE WHEN \(whole) THEN data
                            ELSE substring(data FROM \(Int32(start + 1)) FOR \(Int32(end - start))) END
                FROM cloud.blob_chunk WHERE blob_key = \(key) AND index = \(Int32(index))
                """, logger: logger
            ).single(Data.self)
            guard !data.isEmpty else { continue }
            try await body(Array(data)[...])
        }
    }

    public func delete(key: String) async throws {
        try await database.client.query("DELETE FROM cloud.blob WHERE key = \(key)", logger: logger)
    }

    public func removeAbandoned(startedBefore cutoff: Date) async throws {
        try await database.client.query(
            "DELETE FROM cloud.blob WHERE NOT complete AND created_at < \(cutoff)", logger: logger)
    }

    fileprivate func insertChunk(key: String, index: Int32, bytes: [UInt8]) async throws {
        try await database.client.query(
            "INSERT INTO cloud.blob_chunk (blob_key, index, data) VALUES (\(key), \(index), \(Data(bytes)))",
            logger: logger)
    }

    fileprivate func complete(key: String, size: Int64) async throws {
        try await database.client.query(
            "UPDATE cloud.blob SET size = \(size), complete = true WHERE key = \(key)", logger: logger)
    }
}

/// Buffers up to one chunk and inserts full chunks as they fill.
actor PostgresBlobWriter: BlobWriter {
    let store: PostgresBlobStore
    let key: String
    private var pending: [UInt8] = []
    private var index: Int32 = 0
    private var size: Int64 = 0

    init(store: PostgresBlobStore, key: String) {
        self.store = store
        self.key = key
    }

    func write(_ bytes: ArraySlice<UInt8>) async throws {
        pending.append(contentsOf: bytes)
        size += Int64(bytes.count)
        while pending.count >= store.chunkSize {
            let chunk = Array(pending.prefix(store.chunkSize))
            pending.removeFirst(store.chunkSize)
            try await flush(chunk)
        }
    }

    func finish() async throws {
        if !pending.isEmpty {
            try await flush(pending)
            pending = []
        }
        try await store.complete(key: key, size: size)
    }

    func abort() async {
        try? await store.delete(key: key)
    }

    private func flush(_ chunk: [UInt8]) async throws {
        try await store.insertChunk(key: key, index: index, bytes: chunk)
        index += 1
    }
}
