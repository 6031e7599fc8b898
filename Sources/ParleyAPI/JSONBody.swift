import Foundation
import Hummingbird
import ParleyCore

/// Reads a bounded JSON request body into `T`, turning every decoding failure into a
/// `400 invalid-request` that names the field (``StrictJSON``'s rules included), an oversized
/// body into `413 too-large` and a body of another media type into `415`.
enum JSONBody {
    /// Account and administration bodies are small; anything larger is not a real client.
    static let limit = 64 * 1024
    /// Bodies carrying a message: 20,000 code points, each up to 12 bytes when JSON-escaped.
    static let messageLimit = 256 * 1024

    static func decode<T: Decodable>(
        _ type: T.Type, from request: Request, context: some RequestContext, limit: Int = limit
    ) async throws -> T {
        try decode(T.self, from: try await body(of: request, limit: limit))
    }

    /// A message's body (`POST /v1/rooms/{id}/messages`): a stock client's read from its bytes
    /// (``ParleyCore/NewMessage/plain(_:)``), any other decoded, with the same answers.
    static func message(from request: Request, context: some RequestContext) async throws -> NewMessage {
        let buffer = try await body(of: request, limit: messageLimit)
        if let read = NewMessage.plain(Array(buffer.readableBytesView)) { return try read.get() }
        return try decode(NewMessage.self, from: buffer)
    }

    /// The body of a JSON request, at most `limit` bytes, that ``StrictJSON`` lets through.
    private static func body(of request: Request, limit: Int) async throws -> ByteBuffer {
        guard isJSON(request.headers[.contentType]) else {
            throw ParleyError(.unsupportedMediaType, "The body must be application/json.")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw ParleyError(.tooLarge, "The request body is larger than \(limit) bytes.")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw ParleyError(.tooLarge, "The request body is larger than \(limit) bytes.")
        }
        try StrictJSON.check(buffer.readableBytesView)
        return buffer
    }

    private static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        do {
            return try JSONCoding.decoder.decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw Self.problem(error)
        }
    }

    /// `application/json`, with parameters (`; charset=utf-8`) or without, in any case.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingHTTPWhitespace().lowercased() == "application/json"
    }

    static func problem(_ error: DecodingError) -> ParleyError {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (codingPath + (last.map { [$0] } ?? [])).map { $0.intValue.map(String.init) ?? $0.stringValue }
                .joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath, key)
            return .invalidRequest("\(field) is required", field: field)
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            return .invalidRequest("\(field) must be \(describe(type))", field: field.isEmpty ? nil : field)
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            return .invalidRequest("\(field) must be \(describe(type)), not null", field: field)
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            let field = path(context.codingPath)
            return .invalidRequest("\(field) has an invalid value", field: field)
        default:
            return .invalidRequest("The body is not valid JSON.")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "true or false"
        case is Double.Type: "a number"
        default: "an object of the documented shape"
        }
    }
}

/// A JSON response with a status.
struct JSONResponse<Body: Encodable & Sendable>: ResponseGenerator {
    let status: HTTPResponse.Status
    let body: Body

    init(_ status: HTTPResponse.Status = .ok, _ body: Body) {
        self.status = status
        self.body = body
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        // A signed-in caller's user info signs the file links for them; other contexts' encoders
        // carry none of Parley's.
        let userInfo = (context as? any AnswerUserInfoContext)?.answerUserInfo ?? [:]
        let bytes =
            if let handWritten = body as? any HandWrittenJSON {
                try handWritten.writeJSON(userInfo: userInfo)
            } else {
                try JSONBytesEncoder(userInfo: userInfo).encode(body)
            }
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Query parameters and path segments, validated with the parameter's name in the error.
extension Request {
    func integer(query name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = uri.queryParameters[name[...]] else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ParleyError.invalidRequest(
                "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return value
    }

    /// A message `seq` (history's cursors), when the query names one.
    func seq(query name: String) throws -> Int64? {
        try uri.queryParameters[name[...]].map { text in
            guard let value = Int64(text), value >= 0 else {
                throw ParleyError.invalidRequest("\(name) must be a message seq", field: name)
            }
            return value
        }
    }

    /// An RFC 3339 time, when the query names one. An offset's `+` written unescaped reads as
    /// a space (``FormQueryMiddleware``); a time cannot hold a space there, so it is a `+`.
    func time(query name: String) throws -> Date? {
        try uri.queryParameters[name[...]].map { text in
            var text = String(text)
            if let space = text.lastIndex(of: " "), text.distance(from: space, to: text.endIndex) == 6 {
                text.replaceSubrange(space...space, with: "+")
            }
            guard let date = JSONCoding.date(text) else {
                throw ParleyError.invalidRequest("\(name) must be an RFC 3339 timestamp", field: name)
            }
            return date
        }
    }
}

extension Parameters {
    func id(_ name: String) throws -> Int64 {
        guard let text = get(name), let value = Int64(text), value > 0 else {
            throw ParleyError.notFound()
        }
        return value
    }

    /// Ids of `integer` columns (applications' roles): larger ones cannot exist.
    func smallID(_ name: String) throws -> Int64 {
        let value = try id(name)
        guard value <= Int64(Int32.max) else { throw ParleyError.notFound() }
        return value
    }
}
