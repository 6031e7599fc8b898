import Foundation
import MultipartKit
import NIOCore
import ParleyCore

/// The parts of a `multipart/form-data` upload that matter: the `file` part (its headers
/// and bytes, handed over as they arrive) and the `protected` field.
///
/// `MultipartParser` calls back synchronously; bytes of the file part collect in `pending`
/// during one `execute` and are drained by the caller before the next chunk.
final class MultipartUpload {
    private let parser: MultipartParser
    private var headers: [String: String] = [:]
    private var part: String?
    private(set) var fileName: String?
    private(set) var fileType: String?
    private(set) var fileStarted = false
    private(set) var fileComplete = false
    private(set) var protectedField: String?
    private var fieldValue: [UInt8] = []
    var pending: [UInt8] = []

    init(boundary: String) {
        parser = MultipartParser(boundary: boundary)
        parser.onHeader = { [unowned self] name, value in headers[name.lowercased()] = value }
        parser.onBody = { [unowned self] buffer in body(&buffer) }
        parser.onPartComplete = { [unowned self] in complete() }
    }

    /// The boundary parameter of a `multipart/form-data` content type.
    static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingHTTPWhitespace() }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return (1...70).contains(value.count) ? value : nil
            }
        }
        return nil
    }

    func execute(_ buffer: ByteBuffer) throws {
        do {
            try parser.execute(buffer)
        } catch {
            throw ParleyError.invalidRequest("the multipart body is malformed", field: "file")
        }
    }

    private func body(_ buffer: inout ByteBuffer) {
        if part == nil { startPart() }
        switch part {
        case "file" where !fileComplete:
            pending.append(contentsOf: buffer.readableBytesView)
        case "protected":
            fieldValue.append(contentsOf: buffer.readableBytesView.prefix(16 - fieldValue.count))
        default:
            break
        }
    }

    private func startPart() {
        let disposition = headers["content-disposition"] ?? ""
        part = Self.parameter("name", in: disposition)
        if part == "file" && !fileStarted {
            fileStarted = true
            fileName =
                Self.parameter("filename*", in: disposition).flatMap(Self.extendedValue)
                ?? Self.parameter("filename", in: disposition)
            fileType = headers["content-type"]
        }
    }

    private func complete() {
        if part == nil { startPart() }
        if part == "file" { fileComplete = true }
        if part == "protected" { protectedField = String(decoding: fieldValue, as: UTF8.self) }
        part = nil
        headers = [:]
        fieldValue = []
    }

    /// A `key=value` or `key="value"` parameter of a header.
    static func parameter(_ key: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingHTTPWhitespace().lowercased() == key else { continue }
            var value = String(pair[1].trimmingHTTPWhitespace())
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            return value
        }
        return nil
    }

    /// RFC 8187 `UTF-8''percent-encoded`.
    static func extendedValue(_ value: String) -> String? {
        guard let range = value.range(of: "''") else { return nil }
        return String(value[range.upperBound...]).removingPercentEncoding
    }
}
