import Crypto
import Foundation
import ParleyCore

/// Streams an upload into the blob store while hashing and counting it.
///
/// Nothing larger than a request chunk is held: bytes go to the writer as they come. Past
/// the limit the blob is dropped and the upload fails with 413 at once; a media type the
/// first bytes contradict fails with 400.
final class UploadSink {
    let writer: any BlobWriter
    let limit: Int64
    let declaredType: String?
    private var hasher = SHA256()
    private var head: [UInt8] = []
    private(set) var size: Int64 = 0
    private(set) var mimeType: String?

    init(writer: any BlobWriter, limit: Int64, declaredType: String?) {
        self.writer = writer
        self.limit = limit
        self.declaredType = declaredType
    }

    func append(_ bytes: ArraySlice<UInt8>) async throws {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        guard size <= limit else {
            throw ParleyError(.tooLarge, "The file is larger than \(limit) bytes.")
        }
        hasher.update(data: bytes)
        if mimeType == nil {
            head.append(contentsOf: bytes.prefix(MediaType.sniffLength - head.count))
            if head.count >= MediaType.sniffLength {
                mimeType = try MediaType.resolve(declared: declaredType, leadingBytes: head)
            }
        }
        try await writer.write(bytes)
    }

    func finish() async throws -> (size: Int64, checksum: [UInt8], mimeType: String) {
        let mimeType = try self.mimeType ?? MediaType.resolve(declared: declaredType, leadingBytes: head)
        try await writer.finish()
        return (size, Array(hasher.finalize()), mimeType)
    }
}
