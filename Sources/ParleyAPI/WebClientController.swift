import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore

/// `GET /app/…`: the web client, static files read once from the bundle, under a strict
/// Content Security Policy: scripts and styles only from this origin (none inline), REST on
/// this origin, MQTT only to the broker's WebSocket listener the login names.
struct WebClientController: Sendable {
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
        let etag: String
    }

    /// By path below `/app/` (`index.html`, `js/main.js`).
    let assets: [String: Asset]
    let headers: HTTPFields

    init(endpoint: MQTTEndpoint, fileBaseURL: String) {
        assets = Self.loadedAssets
        var headers = HTTPFields()
        headers[.contentSecurityPolicy] = Self.policy(endpoint: endpoint, fileBaseURL: fileBaseURL)
        headers[.xContentTypeOptions] = "nosniff"
        headers[.referrerPolicy] = "no-referrer"
        headers[.cacheControl] = "no-cache"
        self.headers = headers
    }

    static func policy(endpoint: MQTTEndpoint, fileBaseURL: String) -> String {
        let broker = endpoint.websocketPort.map { "\(endpoint.tls ? "wss" : "ws")://\(endpoint.host):\($0)" }
        // Signed file URLs may point at another origin (PARLEY_FILES_BASE_URL).
        let files = URL(string: fileBaseURL).flatMap { url in
            url.scheme.flatMap { scheme in url.host.map { "\(scheme)://\($0)\(url.port.map { ":\($0)" } ?? "")" } }
        }
        let media = (["'self'", "blob:"] + [files].compactMap { $0 }).joined(separator: " ")
        return [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src \(media) data:",
            "media-src \(media)", "connect-src \((["'self'"] + [broker].compactMap { $0 }).joined(separator: " "))",
            "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    /// `/app` (and `/app/`) is the page; its files are one directory deep at most
    /// (`/app/app.css`, `/app/js/main.js`), each directory a route of its own.
    func addRoutes(to router: Router<ParleyRequestContext>) {
        router.get("app") { request, _ in try answer("index.html", to: request) }
        router.get("app/:file") { request, context in
            try answer(try context.parameters.require("file"), to: request)
        }
        let directories = Set(assets.keys.compactMap { $0.split(separator: "/").dropLast().first.map(String.init) })
        for directory in directories.sorted() {
            router.get(RouterPath(stringLiteral: "app/\(directory)/:file")) { request, context in
                try answer("\(directory)/\(try context.parameters.require("file"))", to: request)
            }
        }
    }

    private func answer(_ path: String, to request: Request) throws -> Response {
        guard let asset = assets[path] else { throw ParleyError(.notFound, "No such file of the web client.") }
        var fields = headers
        fields[.contentType] = asset.contentType
        fields[.eTag] = asset.etag
        if request.headers[.ifNoneMatch] == asset.etag { return Response(status: .notModified, headers: fields) }
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: asset.body))
    }

    private static let loadedAssets: [String: Asset] = {
        guard let root = Bundle.module.url(forResource: "app", withExtension: nil),
            let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        else { return [:] }
        var assets: [String: Asset] = [:]
        let prefix = root.standardizedFileURL.path + "/"
        for case let url as URL in files {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                let type = contentTypes[url.pathExtension], let data = try? Data(contentsOf: url)
            else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(prefix.count))
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            assets[path] = Asset(body: ByteBuffer(bytes: data), contentType: type, etag: "\"\(digest)\"")
        }
        return assets
    }()

    private static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "txt": "text/plain; charset=utf-8", "svg": "image/svg+xml", "png": "image/png",
    ]
}

extension HTTPField.Name {
    static let contentSecurityPolicy = Self("Content-Security-Policy")!
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}
