/// How sends share transactions (group commit); see <doc:MessagePipelinePerformance>.
public struct SendBatching: Sendable, Equatable {
    /// Batches in flight at once; a room always uses the same lane, so its sends keep
    /// their order.
    public var lanes: Int
    /// The most sends in one transaction.
    public var maxBatch: Int
    /// How long a send that finds its lane idle waits for others to join it.
    public var window: Duration
    /// Least time between the starts of one lane's commits: under load the sends that
    /// arrive meanwhile share the next one.
    public var interval: Duration

    public init(
        lanes: Int = 8, maxBatch: Int = 256, window: Duration = .microseconds(200), interval: Duration = .zero
    ) {
        self.lanes = lanes
        self.maxBatch = maxBatch
        self.window = window
        self.interval = interval
    }
}
