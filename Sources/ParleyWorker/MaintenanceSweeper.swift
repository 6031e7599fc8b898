import Foundation
import Logging
import ParleyCore
import ParleyRuntime
import ServiceLifecycle

/// The maintenance role's clock: purges messages past their room's retention and logs past
/// theirs, deletes expired exports, and queues again erasures and exports whose job was lost (a request
/// that could not reach Redis, a job buried after its attempts).
public struct MaintenanceSweeper: Service {
    let erasure: any ErasureRepository
    let exports: any ExportRepository
    let files: FileEraser
    let jobs: any JobQueue
    /// Days after which messages go where a room sets none; nil keeps them.
    let defaultRetentionDays: Int?
    /// Logs kept for a number of days (webhook deliveries, the audit log).
    let logs: [Retention]
    let interval: Duration
    let logger: Logger

    public init(
        erasure: any ErasureRepository, exports: any ExportRepository, files: FileEraser, jobs: any JobQueue,
        defaultRetentionDays: Int?, logs: [Retention] = [], interval: Duration = .seconds(300), logger: Logger
    ) {
        self.logs = logs
        self.erasure = erasure
        self.exports = exports
        self.files = files
        self.jobs = jobs
        self.defaultRetentionDays = defaultRetentionDays
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await Periodically.run(every: interval) {
            do {
                let purged = try await sweep()
                if purged > 0 { logger.info("messages past retention purged", metadata: ["count": "\(purged)"]) }
            } catch {
                logger.warning("maintenance sweep failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One pass; returns how many messages it purged.
    @discardableResult
    public func sweep(now: Date = Date()) async throws -> Int {
        let stale = now.addingTimeInterval(-60)
        var lost = try await erasure.accountsAwaitingErasure(deletedBefore: stale, limit: 100).map {
            MaintenanceJob(.eraseAccount, id: $0).json()
        }
        lost += try await erasure.roomsAwaitingErasure(deletedBefore: stale, limit: 100).map {
            MaintenanceJob(.eraseRoom, id: $0).json()
        }
        lost += try await exports.pending(requestedBefore: stale, limit: 100).map {
            MaintenanceJob(.export, id: $0).json()
        }
        if !lost.isEmpty { try await jobs.enqueue(contentsOf: lost) }
        try await files.erase(try await exports.expire(now: now, limit: 1000))
        try await purgeLogs(now: now)
        return try await purgeExpiredMessages(now: now)
    }

    /// Each log's records past its days, a thousand at a time (at most a million a pass, so a
    /// first pass over a long-kept log does not hold the sweep).
    func purgeLogs(now: Date) async throws {
        for log in logs {
            let cutoff = now.addingTimeInterval(-Double(log.days) * 86_400)
            var purged = 0
            for _ in 0..<1000 {
                let count = try await log.records.purge(before: cutoff, limit: 1000)
                purged += count
                if count < 1000 { break }
            }
            if purged > 0 { logger.info("\(log.name) past retention purged", metadata: ["count": "\(purged)"]) }
        }
    }

    /// Messages older than their room's retention, oldest first, a thousand at a time.
    func purgeExpiredMessages(now: Date) async throws -> Int {
        var purged = 0
        while true {
            let rooms = try await erasure.roomsPastRetention(defaultDays: defaultRetentionDays, now: now, limit: 100)
            for room in rooms {
                while true {
                    let batch = try await erasure.purgeMessages(
                        roomID: room.roomID, createdBefore: room.cutoff, limit: 1000)
                    try await files.erase(batch.releasedFiles)
                    purged += batch.count
                    if batch.count < 1000 { break }
                }
            }
            if rooms.count < 100 { return purged }
        }
    }
}
