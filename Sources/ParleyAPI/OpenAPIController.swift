import Foundation
import Hummingbird

/// `GET /openapi.yaml`: the REST contract, kept in the repository beside the code it
/// describes (a test checks every route is in it).
struct OpenAPIController: Sendable {
    static let document: ByteBuffer = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return ByteBuffer() }
        return ByteBuffer(bytes: data)
    }()

    func addRoutes(to router: Router<ParleyRequestContext>) {
        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: Self.document))
        }
    }
}
