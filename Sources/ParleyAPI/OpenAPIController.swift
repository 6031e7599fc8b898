import Foundation
import Hummingbird

/// `GET /openapi.yaml` and `GET /asyncapi.yaml`: the REST and MQTT contracts, kept in the
/// repository beside the code they describe (tests check them against it).
struct OpenAPIController: Sendable {
    static let openAPI = resource("openapi")
    static let asyncAPI = resource("asyncapi")

    static func resource(_ name: String) -> ByteBuffer {
        guard let url = Bundle.module.url(forResource: name, withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return ByteBuffer() }
        return ByteBuffer(bytes: data)
    }

    func addRoutes(to router: Router<ParleyRequestContext>) {
        for (path, document) in [("/openapi.yaml", Self.openAPI), ("/asyncapi.yaml", Self.asyncAPI)] {
            router.get(RouterPath(stringLiteral: path)) { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                    body: .init(byteBuffer: document))
            }
        }
    }
}
