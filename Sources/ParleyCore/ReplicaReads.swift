/// Which reads may come from a PostgreSQL streaming replica, a little behind the primary.
///
/// None by default: only what opts in, for the work it does (a REST GET by a user who wrote
/// nothing within the read-your-writes window), so a client always sees its own writes and
/// nothing else reads stale data by accident.
public enum ReplicaReads {
    @TaskLocal public static var allowed = false
}

/// Who wrote lately, as every process sees it: a user who did reads from the primary for a
/// while (``ReplicaReads``).
public protocol RecentWriters: Sendable {
    /// Marks the users as having written now.
    func wrote(_ userIDs: [Int64]) async throws
    func wroteRecently(_ userID: Int64) async throws -> Bool
}
