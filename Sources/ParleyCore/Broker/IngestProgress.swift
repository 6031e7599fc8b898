/// What an ingest tells Parley's broker plugin on `$CONTROL/parley-ingest/v1` (server only):
/// how many `chat-in` deliveries it settled (stored or refused, so acknowledged) since its last
/// report, and whether it is idle (it holds nothing and received nothing since then, so the
/// broker holds nothing for it).
///
/// The plugin counts the `chat-in` it passes to the ingest; past its bound of outstanding ones
/// it refuses more unacknowledged, rather than let the broker drop what overflows the
/// ingest's queue after acknowledging it to the sender (ParleyMQTT's `IngestAdmission`
/// article).
public struct IngestProgress: Sendable, Equatable {
    public static let topic = "$CONTROL/parley-ingest/v1"

    public var settled: Int
    public var idle: Bool

    public init(settled: Int, idle: Bool) {
        self.settled = settled
        self.idle = idle
    }

    /// Without spaces: the plugin reads `"settled":` and `"idle":` as written.
    public func json() -> String { #"{"settled":\#(settled),"idle":\#(idle)}"# }
}
