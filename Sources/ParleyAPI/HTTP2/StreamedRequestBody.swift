import Hummingbird
import NIOCore

/// A request body read by its responder while the client still sends it: an upload larger
/// than what a stream gathers before answering (``HTTP2StreamResponder``).
///
/// The stream's handler yields each part; when the responder falls behind, the stream stops
/// reading (``ReadGate``), so HTTP/2's flow control holds the client back instead of memory
/// filling up.
struct StreamedRequestBody {
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Demand
    >

    let body: RequestBody
    private let source: Producer.Source
    private let gate: ReadGate

    init(gate: ReadGate, eventLoop: any EventLoop) {
        let sequence = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: false,
            delegate: Demand(gate: NIOLoopBound(gate, eventLoop: eventLoop)))
        self.body = RequestBody(asyncSequence: sequence.sequence)
        self.source = sequence.source
        self.gate = gate
    }

    func yield(_ part: ByteBuffer) {
        switch source.yield(part) {
        case .stopProducing: gate.hold()
        case .produceMore, .dropped: break
        }
    }

    func finish() { source.finish() }

    /// Ends the body with `failure`: the stream was reset or closed before the request's end.
    func finish(_ failure: any Error) { source.finish(failure) }

    /// The responder's demand, told to the stream's gate on its event loop.
    final class Demand: NIOAsyncSequenceProducerDelegate {
        private let gate: NIOLoopBound<ReadGate>

        init(gate: NIOLoopBound<ReadGate>) { self.gate = gate }

        func produceMore() {
            let gate = gate
            gate.eventLoop.execute { gate.value.release() }
        }

        /// The responder stopped reading (it answered, or gave up): the rest is read and dropped.
        func didTerminate() {
            let gate = gate
            gate.eventLoop.execute { gate.value.release() }
        }
    }
}

/// Holds a stream's reads while its responder is behind in reading the body.
final class ReadGate {
    private var holding = false
    private var pendingRead = false
    /// The stream's handler context, while the handler is in the pipeline.
    var context: ChannelHandlerContext?

    var isHolding: Bool { holding }

    func hold() { holding = true }

    func release() {
        holding = false
        if pendingRead, let context {
            pendingRead = false
            context.read()
        }
    }

    func read(_ context: ChannelHandlerContext) {
        if holding { pendingRead = true } else { context.read() }
    }
}
