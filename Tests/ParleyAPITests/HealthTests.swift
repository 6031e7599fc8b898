import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAPI

struct HealthTests {
    @Test func liveAnswersWithoutTouchingDependencies() async throws {
        let routes = ParleyRoutes.forTesting(probes: [StaticProbe(name: "postgres", up: false)])
        try await withPublicRouter(routes) { client in
            try await client.execute(uri: "/health/live", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"status":"live"}"#)
            }
        }
    }

    @Test func readyIs503NamingTheDependencyThatIsDown() async throws {
        let routes = ParleyRoutes.forTesting(probes: [
            StaticProbe(name: "postgres", up: true), StaticProbe(name: "redis", up: false),
            StaticProbe(name: "mqtt", up: true),
        ])
        try await withPublicRouter(routes) { client in
            try await client.execute(uri: "/health/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let body = try problem(response)
                #expect(body.code == "unavailable")
                #expect(body.checks == ["postgres": .up, "redis": .down, "mqtt": .up])
                #expect(body.detail.contains("redis"))
            }
        }
    }

    /// The same process follows PostgreSQL down and back up: no restart needed.
    @Test func readinessFollowsPostgresStoppingAndReturning() async throws {
        let services = try await TestServices.makePrivate()
        let database = PostgresPool(configuration: services.postgres(), logger: .quiet)
        let routes = ParleyRoutes.forTesting(
            probes: [PostgresProbe(database: database)], readinessTimeout: .milliseconds(500))
        try await database.withRunningClient { _ in
            try await withPublicRouter(routes) { client in
                /// Polls readiness until it answers `expected` (a loaded machine connects slowly).
                func becomes(_ expected: HTTPResponse.Status, within seconds: Int = 30) async throws -> Bool {
                    let deadline = ContinuousClock.now + .seconds(seconds)
                    while ContinuousClock.now < deadline {
                        let status = try await client.execute(uri: "/health/ready", method: .get) { $0.status }
                        if status == expected { return true }
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    return false
                }
                #expect(try await becomes(.ok))
                try await services.stop("postgres")
                #expect(try await becomes(.serviceUnavailable, within: 5))
                try await services.start("postgres")
                // The pool reconnects with a growing back-off; the same process recovers.
                #expect(try await becomes(.ok))
            }
        }
        try await services.shutdown()
    }
}
