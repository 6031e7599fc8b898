import Foundation
import Hummingbird
import ParleyTestSupport
import Synchronization

/// An OpenTelemetry collector's OTLP/HTTP trace endpoint on loopback (`POST /v1/traces`,
/// protobuf): it keeps the spans it receives, as a collector would pass them on.
struct OTLPReceiver: Sendable {
    /// What a test reads of a span.
    struct Span: Sendable, CustomStringConvertible {
        let service: String
        let traceID: String
        let spanID: String
        /// Empty for a trace's root.
        let parentSpanID: String
        let name: String
        let attributes: [String: String]

        var description: String { "\(service) \(name) \(traceID)/\(spanID)<-\(parentSpanID) \(attributes)" }
    }

    /// The spans received, in the order they came.
    final class Store: Sendable {
        let spans = Mutex<[Span]>([])
    }

    private let store: Store
    private let server: LoopbackHTTPServer

    var received: [Span] { store.spans.withLock { $0 } }
    var endpoint: String { server.baseURL }

    static func start() async throws -> OTLPReceiver {
        let store = Store()
        let router = Router()
        router.post("v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            let decoded = try TraceRequest.spans(in: Array(body.readableBytesView)[...])
            store.spans.withLock { $0 += decoded }
            // An empty ExportTraceServiceResponse: everything accepted.
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"])
        }
        return OTLPReceiver(store: store, server: try await LoopbackHTTPServer.start(router))
    }

    func stop() async { await server.stop() }
}

/// The fields of `ExportTraceServiceRequest` (opentelemetry-proto's trace/v1) a test reads,
/// decoded from protobuf's wire format.
enum TraceRequest {
    static func spans(in request: ArraySlice<UInt8>) throws -> [OTLPReceiver.Span] {
        var spans: [OTLPReceiver.Span] = []
        for resourceSpans in try Protobuf.fields(request, number: 1) {
            let resource = try Protobuf.fields(resourceSpans, number: 1).first ?? []
            let service = try attributes(resource)["service.name"] ?? ""
            for scopeSpans in try Protobuf.fields(resourceSpans, number: 2) {
                for span in try Protobuf.fields(scopeSpans, number: 2) {
                    spans.append(
                        OTLPReceiver.Span(
                            service: service, traceID: try hex(span, 1), spanID: try hex(span, 2),
                            parentSpanID: try hex(span, 4),
                            name: String(decoding: try Protobuf.fields(span, number: 5).first ?? [], as: UTF8.self),
                            attributes: try attributes(span, number: 9)))
                }
            }
        }
        return spans
    }

    private static func hex(_ message: ArraySlice<UInt8>, _ number: Int) throws -> String {
        (try Protobuf.fields(message, number: number).first ?? []).map { String(format: "%02x", $0) }.joined()
    }

    /// `KeyValue`s (field `number`): string values as they are, integers as decimal text.
    private static func attributes(_ message: ArraySlice<UInt8>, number: Int = 1) throws -> [String: String] {
        var attributes: [String: String] = [:]
        for pair in try Protobuf.fields(message, number: number) {
            let key = String(decoding: try Protobuf.fields(pair, number: 1).first ?? [], as: UTF8.self)
            guard let value = try Protobuf.fields(pair, number: 2).first else { continue }
            if let text = try Protobuf.fields(value, number: 1).first {
                attributes[key] = String(decoding: text, as: UTF8.self)
            } else if let integer = try Protobuf.varints(value, number: 3).first {
                attributes[key] = String(Int64(bitPattern: integer))
            }
        }
        return attributes
    }
}

/// Protocol Buffers' wire format, as much as reading OTLP needs.
enum Protobuf {
    struct Malformed: Error {}

    enum Value {
        case varint(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed
    }

    /// The length-delimited values of field `number`, in order.
    static func fields(_ message: ArraySlice<UInt8>, number: Int) throws -> [ArraySlice<UInt8>] {
        try all(message).compactMap { field, value in
            guard field == number, case .bytes(let bytes) = value else { return nil }
            return bytes
        }
    }

    static func varints(_ message: ArraySlice<UInt8>, number: Int) throws -> [UInt64] {
        try all(message).compactMap { field, value in
            guard field == number, case .varint(let integer) = value else { return nil }
            return integer
        }
    }

    static func all(_ message: ArraySlice<UInt8>) throws -> [(Int, Value)] {
        var rest = message
        var fields: [(Int, Value)] = []
        while !rest.isEmpty {
            let key = try varint(&rest)
            let number = Int(key >> 3)
            switch key & 7 {
            case 0: fields.append((number, .varint(try varint(&rest))))
            case 1: try skip(8, &rest)
            case 2:
                let length = Int(try varint(&rest))
                guard length <= rest.count else { throw Malformed() }
                fields.append((number, .bytes(rest.prefix(length))))
                rest = rest.dropFirst(length)
            case 5: try skip(4, &rest)
            default: throw Malformed()
            }
        }
        return fields
    }

    private static func skip(_ count: Int, _ rest: inout ArraySlice<UInt8>) throws {
        guard rest.count >= count else { throw Malformed() }
        rest = rest.dropFirst(count)
    }

    private static func varint(_ rest: inout ArraySlice<UInt8>) throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard let byte = rest.popFirst() else { throw Malformed() }
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        throw Malformed()
    }
}
