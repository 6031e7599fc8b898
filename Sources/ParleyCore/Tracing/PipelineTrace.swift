import Synchronization
import Tracing

/// A message's trace through the pipeline: the REST send or the `chat-in` message that stores
/// it, the outbox relay, the fan-out and the push are one trace, though each step runs in
/// another process or task and handles its messages in batches. Each step's span is a child
/// of the W3C `traceparent` that the outbox row or the job it took carries, and the step hands
/// its own span's on in the row or job it makes.
///
/// Tracing is off unless the composition root turns it on (`PARLEY_OTEL_ENDPOINT`); off, a
/// step costs one relaxed atomic load and carries nothing.
public enum PipelineTrace {
    private static let on = Atomic<Bool>(false)

    /// Whether spans are made and trace contexts carried.
    public static var isOn: Bool { on.load(ordering: .relaxed) }

    /// Called by the composition root once a tracer is bootstrapped.
    public static func turnOn() { on.store(true, ordering: .relaxed) }

    /// The `traceparent` of the task's current span (a REST request's); nil when off or
    /// outside a span.
    public static func current() -> String? {
        guard isOn, let context = InstrumentationContext.current else { return nil }
        return traceparent(of: context)
    }

    /// Starts a trace of its own (a `chat-in` message: MQTT carries no trace context from
    /// Parley's clients); nil when off.
    public static func startTrace(_ name: String, kind: SpanKind) -> PipelineSpan? {
        guard isOn else { return nil }
        return PipelineSpan(startSpan(name, context: .topLevel, ofKind: kind))
    }

    /// Starts a step of the trace `parent` carries; nil when off or when nothing was carried
    /// (the message was stored while tracing was off, or the event is not a message's).
    public static func continueTrace(_ name: String, from parent: String?, kind: SpanKind) -> PipelineSpan? {
        guard isOn, let parent else { return nil }
        var context = InstrumentationContext.topLevel
        InstrumentationSystem.tracer.extract(["traceparent": parent], into: &context, using: TraceCarrier())
        return PipelineSpan(startSpan(name, context: context, ofKind: kind))
    }

    static func traceparent(of context: InstrumentationContext) -> String? {
        var carrier: [String: String] = [:]
        InstrumentationSystem.tracer.inject(context, into: &carrier, using: TraceCarrier())
        return carrier["traceparent"]
    }
}

/// One step's span, and the `traceparent` it hands on.
public struct PipelineSpan: Sendable {
    let span: any Span
    /// What the row or job this step makes carries, so the next step continues this trace.
    public let traceparent: String?

    init(_ span: any Span) {
        self.span = span
        traceparent = PipelineTrace.traceparent(of: span.context)
    }

    public func set(_ attribute: String, _ value: Int) { span.attributes[attribute] = value }
    public func set(_ attribute: String, _ value: String) { span.attributes[attribute] = value }

    /// Ends the span, marked failed when `error` is given.
    public func end(failing error: (any Error)? = nil) {
        if let error {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }
}

/// The W3C headers as a dictionary (what rows and jobs carry is only `traceparent`).
private struct TraceCarrier: Extractor, Injector {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
