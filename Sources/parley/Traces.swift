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
/// swift-otel. Of the OpenTelemetry SDK's own `OTEL_*` variables, the sampler's, the batch
/// processor's and the resource's apply; those that would undo what Parley relies on (where
/// spans go, how, and the W3C `traceparent` the pipeline carries) are refused, and
/// `OTEL_SDK_DISABLED=true` turns tracing off.
enum Traces {
    private static let bootstrapped = Mutex(false)

    /// The span processor's queue and pace: one export of up to 4,096 spans every 250 ms
    /// carries 16,000 spans a second, twice the four spans a message of 2,000 messages a
    /// second, and the queue holds 4 s of that while a collector is slow. (The SDK's defaults,
    /// 512 spans every 5 s in a queue of 2,048, would drop nearly all of them.)
    static let queueSize = 65_536
    static let exportBatch = 4_096
    static let exportEvery: Duration = .milliseconds(250)
    /// Well inside the process's 30 s drain, so the last export ends before it is cut off.
    static let exportTimeout: Duration = .seconds(10)

    /// Bootstraps the process's tracer (once) and returns the exporter's service, which the
    /// process runs first and stops last, so the spans of its drain are sent too. Nil when
    /// tracing is off.
    static func start(
        settings: Settings, process: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (any Service)? {
        guard let configuration = try configuration(settings: settings, process: process, environment: environment)
        else { return nil }
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
    static func configuration(
        settings: Settings, process: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> OTel.Configuration? {
        let endpointKey = SettingKeys.Traces.endpoint
        guard let endpoint = settings.string(endpointKey), environment["OTEL_SDK_DISABLED"] != "true" else {
            return nil
        }
        guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme), url.host != nil else {
            throw SettingsError.invalid(endpointKey, expected: "an http:// or https:// address")
        }
        try refuseConflicts(in: environment)
        var configuration = OTel.Configuration.default
        configuration.serviceName = "parley-\(process)"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.diagnosticLogger = .custom(Runtime.logger("otel"))
        configuration.traces.batchSpanProcessor.maxQueueSize = queueSize
        configuration.traces.batchSpanProcessor.maxExportBatchSize = exportBatch
        configuration.traces.batchSpanProcessor.scheduleDelay = exportEvery
        configuration.traces.batchSpanProcessor.exportTimeout = exportTimeout
        configuration.traces.otlpExporter.timeout = exportTimeout
        // As OTEL_EXPORTER_OTLP_ENDPOINT is read: the base, to which the signal's path is added.
        configuration.traces.otlpExporter.endpoint =
            endpoint.hasSuffix("/") ? endpoint + "v1/traces" : endpoint + "/v1/traces"
        // OTLP/HTTP's default encoding. (swift-otel's http/json writes ids in base64, where
        // OTLP asks for hex, so collectors would refuse it.)
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        return configuration
    }

    /// The SDK's variables that would override what Parley sets and relies on.
    static func refuseConflicts(in environment: [String: String]) throws {
        for variable in ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
        where environment[variable] != nil {
            throw TracesSettingError("\(variable) is set: PARLEY_OTEL_ENDPOINT names the collector; unset \(variable)")
        }
        for variable in ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] {
            if let value = environment[variable], value != "http/protobuf" {
                throw TracesSettingError("\(variable)=\(value): Parley exports http/protobuf only; unset \(variable)")
            }
        }
        if let exporter = environment["OTEL_TRACES_EXPORTER"], exporter != "otlp" {
            throw TracesSettingError(
                "OTEL_TRACES_EXPORTER=\(exporter): Parley exports OTLP; unset it, or unset PARLEY_OTEL_ENDPOINT")
        }
        if let propagators = environment["OTEL_PROPAGATORS"],
            !propagators.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == "tracecontext"
            })
        {
            throw TracesSettingError(
                "OTEL_PROPAGATORS=\(propagators): a message's trace is carried as a W3C traceparent; include tracecontext"
            )
        }
    }
}

/// An `OTEL_*` variable at odds with Parley's tracing.
struct TracesSettingError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
