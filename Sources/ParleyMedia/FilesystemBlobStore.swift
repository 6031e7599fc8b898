import Foundation
import NIOPosix
import ParleyCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Blobs as files under one directory: `<root>/<first two characters>/<key>`.
///
/// A blob is written to `<root>/incoming/` and renamed into place only when complete, so a
/// reader never sees half a file. Keys are made by the server and checked here anyway: no
/// path is ever built from user input. Blocking file calls run on NIO's thread pool.
public struct FilesystemBlobStore: BlobStore {
    public let root: String

    public init(root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: "\(root)/incoming", withIntermediateDirectories: true)
    }

    public func makeWriter(key: String) async throws -> any BlobWriter {
        let final = try path(for: key)
        let temporary = "\(root)/incoming/\(key).\(UUID().uuidString.prefix(8))"
        let descriptor = try await Self.blocking { () throws -> Int32 in
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw BlobStoreError.io("create", errno) }
            return descriptor
        }
        return FileBlobWriter(descriptor: descriptor, temporary: temporary, final: final)
    }

    public func size(key: String) async throws -> Int64? {
        let path = try path(for: key)
        return try await Self.blocking {
            var info = stat()
            guard stat(path, &info) == 0 else {
                if errno == ENOENT { return nil }
                throw BlobStoreError.io("stat", errno)
            }
            return Int64(info.st_size)
        }
    }

    public func read(key: String, range: Range<Int64>, into body: (ArraySlice<UInt8>) async throws -> Void)
        async throws
    {
        let path = try path(for: key)
        let descriptor = try await Self.blocking { () throws -> Int32 in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw BlobStoreError.io("open", errno) }
            return descriptor
        }
        defer { close(descriptor) }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let length = Int(min(Int64(Self.chunkSize), range.upperBound - offset))
            let start = offset
            let chunk = try await Self.blocking { () throws -> [UInt8] in
                var bytes = [UInt8](repeating: 0, count: length)
                let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, off_t(start)) }
                guard count > 0 else { throw BlobStoreError.io("read", count == 0 ? EIO : errno) }
                return Array(bytes[0..<count])
            }
            try await body(chunk[...])
            offset += Int64(chunk.count)
        }
    }

    public func delete(key: String) async throws {
        let path = try path(for: key)
        try await Self.blocking {
            guard unlink(path) == 0 || errno == ENOENT else { throw BlobStoreError.io("unlink", errno) }
        }
    }

    public func removeAbandoned(startedBefore cutoff: Date) async throws {
        let incoming = "\(root)/incoming"
        try await Self.blocking {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: incoming)) ?? [] {
                let path = "\(incoming)/\(name)"
                let modified = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
                if let modified, modified < cutoff { unlink(path) }
            }
        }
    }

    static let chunkSize = 256 * 1024

    func path(for key: String) throws -> String {
        guard BlobKey.isValid(key) else { throw BlobStoreError.invalidKey }
        return "\(root)/\(key.prefix(2))/\(key)"
    }

    static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}

/// A blob being written to its temporary file.
final class FileBlobWriter: BlobWriter {
    let temporary: String
    let final: String
    private let descriptor: Mutex<Int32>

    init(descriptor: Int32, temporary: String, final: String) {
        self.descriptor = Mutex(descriptor)
        self.temporary = temporary
        self.final = final
    }

    func write(_ bytes: ArraySlice<UInt8>) async throws {
        let descriptor = self.descriptor.withLock { $0 }
        let bytes = Array(bytes)
        try await FilesystemBlobStore.blocking {
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes {
                    Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written)
                }
                guard count > 0 else {
                    if count < 0 && errno == EINTR { continue }
                    throw BlobStoreError.io("write", errno)
                }
                written += count
            }
        }
    }

    func finish() async throws {
        let descriptor = self.descriptor.withLock { value in
            defer { value = -1 }
            return value
        }
        let (temporary, final) = (self.temporary, self.final)
        try await FilesystemBlobStore.blocking {
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw BlobStoreError.io("fsync", errno) }
            let directory = (final as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard rename(temporary, final) == 0 else { throw BlobStoreError.io("rename", errno) }
        }
    }

    /// Drops the blob: the temporary file, or the finished one if it was already made visible.
    func abort() async {
        let descriptor = self.descriptor.withLock { value in
            defer { value = -1 }
            return value
        }
        let (temporary, final) = (self.temporary, self.final)
        _ = try? await FilesystemBlobStore.blocking {
            if descriptor >= 0 { close(descriptor) }
            if unlink(temporary) != 0 { unlink(final) }
        }
    }
}

public enum BlobStoreError: Error, CustomStringConvertible {
    case invalidKey
    case io(String, Int32)

    public var description: String {
        switch self {
        case .invalidKey: "invalid blob key"
        case .io(let operation, let code): "\(operation) failed: \(String(cString: strerror(code)))"
        }
    }
}
