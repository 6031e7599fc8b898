import Foundation
import Logging
import OTel
import ParleyCore
import ServiceLifecycle
import Synchronization
import Tracing

/// OpenTelemetry traces, when `PARLEY_OTEL_ENDPOINT` names a collector: a message's trace
/// runs from the REST request or `chat-in` message through the relay, the fan-out and the
/// push (``ParleyCore/PipelineTrace``). Spans are exported over OTLP/HTTP in batches by
/// swift-otel; the OpenTelemetry SDK's own `OTEL_*` variables (the sampler, the batch
/// processor's sizes) override what is set here.
enum Traces {
    private static let bootstrapped = Mutex(false)

    /// The span processor's queue: at 2,000 messages a second, four spans each, the SDK's
    /// default of 2,048 would drop spans between two exports.
    static let queueSize = 65_536

    /// Bootstraps the process's tracer (once) and returns the exporter's service, which the
    /// process runs first and stops last, so the spans of its drain are sent too. Nil when
    /// tracing is off.
    static func start(settings: Settings, process: String) throws -> (any Service)? {
        guard let configuration = try configuration(settings: settings, process: process) else { return nil }
        let first = bootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return nil }
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        PipelineTrace.turnOn()
        return backend.service
    }

    /// The SDK's configuration for `process` (`serve`, `worker`): traces only (logs and metrics
    /// have their own paths: standard error and `/metrics`).
    static func configuration(settings: Settings, process: String) throws -> OTel.Configuration? {
        let endpointKey = SettingKeys.Traces.endpoint
        guard let endpoint = settings.string(endpointKey) else { return nil }
        guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme), url.host != nil else {
            throw SettingsError.invalid(endpointKey, expected: "an http:// or https:// address")
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "parley-\(process)"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.diagnosticLogger = .custom(Runtime.logger("otel"))
        configuration.traces.batchSpanProcessor.maxQueueSize = queueSize
        configuration.traces.batchSpanProcessor.maxExportBatchSize = 4_096
        // As OTEL_EXPORTER_OTLP_ENDPOINT is read: the base, to which the signal's path is added.
        configuration.traces.otlpExporter.endpoint =
            endpoint.hasSuffix("/") ? endpoint + "v1/traces" : endpoint + "/v1/traces"
        // OTLP/HTTP's default encoding. (swift-otel's http/json writes ids in base64, where
        // OTLP asks for hex, so collectors would refuse it.)
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        return configuration
    }
}
