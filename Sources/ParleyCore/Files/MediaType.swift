/// Media types checked against the content's first bytes.
public enum MediaType {
    /// Bytes needed to recognise every type below.
    public static let sniffLength = 16

    /// The type the leading bytes prove, when they prove one.
    public static func sniff(_ bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("%PDF-".utf8)) { return "application/pdf" }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            if brand == "qt  " { return "video/quicktime" }
            if ["heic", "heix", "mif1"].contains(brand) { return "image/heic" }
            if brand.hasPrefix("M4A") { return "audio/mp4" }
            return "video/mp4"
        }
        return nil
    }

    /// The declared type when the content agrees with it; a type the content proves when
    /// none was declared. A declared image, video or audio type the content does not prove
    /// is refused (players and decoders trust it).
    public static func resolve(declared: String?, leadingBytes: [UInt8]) throws -> String {
        let declared = declared.map(normalise)
        let sniffed = sniff(leadingBytes)
        switch (declared, sniffed) {
        case (nil, let sniffed?), ("application/octet-stream", let sniffed?):
            return sniffed
        case (let declared?, let sniffed?):
            guard family(declared) == family(sniffed) || declared == sniffed else {
                throw ParleyError.invalidRequest(
                    "the content is \(sniffed), not \(declared)", field: "file")
            }
            return declared == sniffed ? declared : sniffed
        case (let declared?, nil):
            if ["image", "video", "audio"].contains(family(declared)) || declared == "application/pdf" {
                throw ParleyError.invalidRequest("the content is not \(declared)", field: "file")
            }
            return declared
        case (nil, nil):
            return "application/octet-stream"
        }
    }

    /// Types a browser or player may show in place: images, audio, video and PDF that Parley
    /// recognises. Anything else is served as an attachment.
    public static func isInlineSafe(_ type: String) -> Bool {
        [
            "image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/quicktime", "audio/mp4",
            "audio/mpeg", "application/pdf",
        ].contains(type)
    }

    /// `type/subtype` in lower case without parameters; a malformed type is octet-stream.
    static func normalise(_ type: String) -> String {
        let bare = type.split(separator: ";").first.map { $0.trimmingHTTPWhitespace().lowercased() } ?? ""
        let parts = bare.split(separator: "/")
        guard parts.count == 2, bare.count <= 127,
            bare.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/.+-_".contains($0)) })
        else { return "application/octet-stream" }
        return bare
    }

    static func family(_ type: String) -> String { String(type.split(separator: "/").first ?? "") }
}
