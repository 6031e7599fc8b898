import ParleyCore

/// Who wrote lately (``ParleyCore/RecentWriters``): a key per user that expires after the
/// read-your-writes window, shared by every process.
public struct RedisRecentWriters: RecentWriters {
    let pool: RedisConnectionPool
    let window: Duration
    let namespace: String

    public init(pool: RedisConnectionPool, window: Duration, namespace: String = "parley") {
        self.pool = pool
        self.window = window
        self.namespace = namespace
    }

    public func wrote(_ userIDs: [Int64]) async throws {
        guard !userIDs.isEmpty else { return }
        let milliseconds = String(max(1, Int(window / .milliseconds(1))))
        for result in try await pool.pipeline(userIDs.map { ["SET", key($0), "1", "PX", milliseconds] }) {
            _ = try result.get()
        }
    }

    public func wroteRecently(_ userID: Int64) async throws -> Bool {
        try await pool.send("EXISTS", key(userID)).integer == 1
    }

    private func key(_ userID: Int64) -> String { "\(namespace):wrote:\(userID)" }
}
