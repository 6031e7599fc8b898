import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore

/// Streams stored content with the conditional and Range rules of RFC 9110: 304 for a
/// current copy, 206 for one range (or `multipart/byteranges` for several), 416 for none
/// that fits, and the whole file otherwise. Bytes come from the blob store chunk by chunk.
struct ContentResponse {
    let store: any BlobStore
    let key: String
    let size: Int64
    let mimeType: String
    let entityTag: String
    let lastModified: Date
    /// Shown to the client when saving; nil for thumbnails.
    let fileName: String?
    let cacheControl: String

    func response(to request: Request) -> Response {
        let modified = Int64(lastModified.timeIntervalSince1970)
        let preconditions = Preconditions(entityTag: entityTag, lastModified: modified)
        var headers = commonHeaders()
        if preconditions.notModified(
            ifNoneMatch: request.headers[.ifNoneMatch],
            ifModifiedSince: request.headers[.ifModifiedSince].flatMap(HTTPDate.seconds))
        {
            return Response(status: .notModified, headers: headers)
        }
        let head = request.method == .head
        var selection = RangeSelection.evaluate(request.headers[.range], size: size)
        // Range applies to GET only (RFC 9110 §14.2); If-Range may void it.
        if head || !preconditions.rangeApplies(ifRange: request.headers[.ifRange], parseDate: HTTPDate.seconds) {
            selection = .whole
        }
        switch selection {
        case .whole:
            headers[.contentType] = mimeType
            return Response(status: .ok, headers: headers, body: stream([0..<size], contentLength: size, head: head))
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(
                status: .rangeNotSatisfiable, headers: headers, body: ResponseBody())
        case .partial(let ranges) where ranges.count == 1:
            let range = ranges[0]
            headers[.contentType] = mimeType
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
            return Response(
                status: .partialContent, headers: headers,
                body: stream([range], contentLength: Int64(range.count), head: head))
        case .partial(let ranges):
            return multipart(ranges, headers: headers, head: head)
        }
    }

    private func commonHeaders() -> HTTPFields {
        var headers = HTTPFields()
        headers[.acceptRanges] = "bytes"
        headers[.eTag] = entityTag
        headers[.lastModified] = HTTPDate.format(lastModified)
        headers[.cacheControl] = cacheControl
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        // Content is served from the API's origin: it must never run as a page there.
        headers[HTTPField.Name("Content-Security-Policy")!] = "sandbox; default-src 'none'"
        if let fileName {
            let disposition = MediaType.isInlineSafe(mimeType) ? "inline" : "attachment"
            headers[.contentDisposition] = Self.disposition(disposition, fileName: fileName)
        }
        return headers
    }

    /// `multipart/byteranges`: each part with its type and range, lengths known in advance.
    private func multipart(_ ranges: [Range<Int64>], headers: HTTPFields, head: Bool) -> Response {
        var headers = headers
        let boundary = "parley-" + BlobKey.generate()
        let partHeads = ranges.map { range in
            Array(
                "\r\n--\(boundary)\r\nContent-Type: \(mimeType)\r\nContent-Range: bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)\r\n\r\n"
                    .utf8)
        }
        let tail = Array("\r\n--\(boundary)--\r\n".utf8)
        let length =
            partHeads.reduce(0) { $0 + Int64($1.count) } + ranges.reduce(0) { $0 + Int64($1.count) }
            + Int64(tail.count)
        headers[.contentType] = "multipart/byteranges; boundary=\(boundary)"
        let store = self.store
        let key = self.key
        let body = ResponseBody(contentLength: Int(length)) { writer in
            if !head {
                for (range, partHead) in zip(ranges, partHeads) {
                    try await writer.write(ByteBuffer(bytes: partHead))
                    try await store.read(key: key, range: range) { try await writer.write(ByteBuffer(bytes: $0)) }
                }
                try await writer.write(ByteBuffer(bytes: tail))
            }
            try await writer.finish(nil)
        }
        return Response(status: .partialContent, headers: headers, body: body)
    }

    private func stream(_ ranges: [Range<Int64>], contentLength: Int64, head: Bool) -> ResponseBody {
        let store = self.store
        let key = self.key
        return ResponseBody(contentLength: Int(contentLength)) { writer in
            if !head {
                for range in ranges where !range.isEmpty {
                    try await store.read(key: key, range: range) { try await writer.write(ByteBuffer(bytes: $0)) }
                }
            }
            try await writer.finish(nil)
        }
    }

    /// `inline` or `attachment` with an ASCII fallback name and the RFC 8187 UTF-8 name.
    static func disposition(_ kind: String, fileName: String) -> String {
        let ascii = String(
            fileName.unicodeScalars.map {
                $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_"
            })
        let allowed = CharacterSet(
            charactersIn: "!#$&+-.^_`|~abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let encoded = fileName.addingPercentEncoding(withAllowedCharacters: allowed) ?? "file"
        return "\(kind); filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }
}
