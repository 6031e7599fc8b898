import Foundation
import ParleyTestSupport
import Testing

/// `/metrics` of a real serve: each route's requests by method and status, their durations,
/// and the requests in progress.
struct RequestMetricsTests {
    @Test func aServeCountsAndTimesEachRouteByMethodAndStatus() async throws {
        let services = try TestServices.shared()
        let database = try await services.makeDatabase(migrated: true)
        let stack = try await LiveStack.start(ParleyCommand(database: database, services: services), worker: false)
        try await stack.stopping {
            for _ in 0..<3 { #expect(try await stack.request("GET", "/health/live").status == 200) }
            #expect(try await stack.request("GET", "/v1/rooms").status == 401)
            let internalBase = try await #require(stack.serve).url(of: "internal")
            let metrics = try await stack.request("GET", "/metrics", on: internalBase)
            #expect(metrics.status == 200)
            let lines = metrics.text.split(separator: "\n")
            func value(_ name: String, _ labels: [String]) -> Double? {
                lines.first { line in line.hasPrefix(name + "{") && labels.allSatisfy { line.contains($0) } }
                    .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            }
            let live = [
                #"http_route="/health/live""#, #"http_request_method="GET""#, #"http_response_status_code="200""#,
            ]
            #expect(value("hb_requests", live) == 3)
            #expect(value("http_server_request_duration_count", live) == 3)
            #expect((value("http_server_request_duration_sum", live) ?? 0) > 0)
            let refused = [
                #"http_route="/v1/rooms""#, #"http_request_method="GET""#, #"http_response_status_code="401""#,
            ]
            #expect(value("hb_requests", refused) == 1)
            // Only the /metrics request itself is in progress.
            #expect(value("http_server_active_requests", [#"http_request_method="GET""#]) == 1)
        }
    }
}
