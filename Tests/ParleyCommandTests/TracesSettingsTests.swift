import Foundation
import Testing

@testable import parley

/// `PARLEY_OTEL_ENDPOINT` and the SDK's `OTEL_*` variables: what turns tracing on, where
/// spans go, and which of the SDK's variables are refused because they would undo it.
struct TracesSettingsTests {
    func configure(_ endpoint: String?, _ environment: [String: String] = [:]) throws -> String? {
        let settings = Settings(environment: endpoint.map { ["PARLEY_OTEL_ENDPOINT": $0] } ?? [:])
        return try Traces.configuration(settings: settings, process: "serve", environment: environment)
            .map { "\($0.serviceName) \($0.traces.otlpExporter.endpoint)" }
    }

    @Test func tracingIsOffUnlessAnEndpointIsSetAndTheSDKIsNotDisabled() throws {
        #expect(try configure(nil) == nil)
        #expect(try configure("http://collector:4318", ["OTEL_SDK_DISABLED": "true"]) == nil)
    }

    @Test func spansGoToTheCollectorsTracePathAsTheProcess() throws {
        #expect(try configure("http://collector:4318") == "parley-serve http://collector:4318/v1/traces")
        #expect(try configure("https://collector/otlp/") == "parley-serve https://collector/otlp/v1/traces")
        #expect(throws: SettingsError.self) { try configure("collector:4318") }
    }

    @Test func theSDKsVariablesThatWouldUndoItAreRefusedAndTheRestApply() throws {
        for conflict in [
            ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://elsewhere:4318"],
            ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://elsewhere:4318/v1/traces"],
            ["OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"], ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"],
            ["OTEL_TRACES_EXPORTER": "console"], ["OTEL_PROPAGATORS": "b3"],
        ] {
            #expect(throws: TracesSettingError.self, "\(conflict)") { try configure("http://c:4318", conflict) }
        }
        let applied = [
            "OTEL_PROPAGATORS": "tracecontext, baggage", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01",
        ]
        #expect(try configure("http://c:4318", applied) != nil)
    }
}
