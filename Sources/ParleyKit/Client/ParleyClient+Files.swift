import Foundation
import OpenAPIRuntime

/// How far an upload has got: the bytes handed to the HTTP client, of all of them.
public struct ParleyUploadProgress: Sendable, Hashable {
    public var sent: Int
    public var total: Int

    public var fraction: Double { total == 0 ? 1 : Double(sent) / Double(total) }
}

extension ParleyClient {
    /// Uploads a file, streamed 64 KiB at a time, telling `progress` as its bytes go; returns
    /// the stored file, which a message attaches by its id (``send(_:in:attachments:uid:)``).
    /// The server reads the type from the content.
    ///
    /// - Parameter protected: whether only the rooms' readers may open it (the default), or
    ///   anyone with its public link.
    public func upload(
        _ data: Data, name: String, protected: Bool = true,
        progress: @escaping @Sendable (ParleyUploadProgress) -> Void = { _ in }
    ) async throws -> Components.Schemas.File {
        let rest = try signedIn().rest
        // Multiple: a request refused for an expired token is sent again whole.
        let body = HTTPBody(
            UploadChunks(bytes: Array(data), progress: progress), length: .known(Int64(data.count)),
            iterationBehavior: .multiple)
        return try await rest.postV1Files(query: .init(name: name, protected: protected), body: .binary(body))
            .created.body.json
    }
}

/// A file's bytes in chunks, each told to `progress` as the HTTP client takes it.
struct UploadChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    static let chunkSize = 64 * 1024
    let bytes: [UInt8]
    let progress: @Sendable (ParleyUploadProgress) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let bytes: [UInt8]
        let progress: @Sendable (ParleyUploadProgress) -> Void
        var offset = 0

        mutating func next() async -> ArraySlice<UInt8>? {
            guard offset < bytes.count else { return nil }
            let end = Swift.min(offset + UploadChunks.chunkSize, bytes.count)
            defer {
                offset = end
                progress(ParleyUploadProgress(sent: end, total: bytes.count))
            }
            return bytes[offset..<end]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, progress: progress) }
}
