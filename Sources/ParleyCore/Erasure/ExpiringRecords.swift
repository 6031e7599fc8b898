import Foundation

/// Records kept for a while, then purged by the maintenance sweep: webhook deliveries (with
/// their attempts) and the audit log.
public protocol ExpiringRecords: Sendable {
    /// Deletes up to `limit` of the oldest records made before `cutoff`; how many it deleted.
    func purge(before cutoff: Date, limit: Int) async throws -> Int
}

/// How long one kind of record is kept.
public struct Retention: Sendable {
    public let name: String
    public let records: any ExpiringRecords
    public let days: Int

    public init(_ name: String, records: any ExpiringRecords, days: Int) {
        self.name = name
        self.records = records
        self.days = days
    }
}
