/// Sends at a fixed rate regardless of how fast answers come back (open loop): operation
/// `i` is due at `start + i / rate`, and its latency counts from that time. A closed loop
/// (send, wait, send) slows down with the server and hides its worst moments (coordinated
/// omission).
enum OpenLoop {
    /// Runs `send` for every operation due within `duration` and waits for all of them.
    ///
    /// - Parameter send: the operation index and its intended send time (``Clock``); runs
    ///   concurrently with later operations.
    /// - Returns: how many operations were started.
    static func run(
        rate: Double, duration: Duration, send: @escaping @Sendable (_ index: Int, _ intended: UInt64) async -> Void
    ) async -> Int {
        let interval = 1e9 / rate
        let start = Clock.nanoseconds()
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let total = Int((seconds * rate).rounded())
        return await withTaskGroup(of: Void.self) { group in
            var index = 0
            while index < total {
                let now = Clock.nanoseconds()
                // Everything due by now starts now; the schedule never slips.
                while index < total, start + UInt64(Double(index) * interval) <= now {
                    let intended = start + UInt64(Double(index) * interval)
                    let current = index
                    group.addTask { await send(current, intended) }
                    index += 1
                }
                guard index < total else { break }
                let next = start + UInt64(Double(index) * interval)
                let wait = next > now ? next - now : 0
                try? await Task.sleep(for: .nanoseconds(Int64(wait)))
            }
            await group.waitForAll()
            return total
        }
    }
}
