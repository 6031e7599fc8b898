import Foundation
import Logging
import ParleyCore
import ParleyRuntime
import ServiceLifecycle

/// Deletes uploads that no message took within the grace period, with their content and
/// thumbnails, and blobs whose upload was abandoned half-way.
public struct OrphanSweeper: Service {
    let files: any FileRepository
    let store: any BlobStore
    let grace: Duration
    let interval: Duration
    let logger: Logger
    /// Seconds a public upload (served without a token) waits for a message: an hour, or the
    /// grace if shorter, so that public files are for rooms, not a free host.
    static let publicGrace: TimeInterval = 3_600

    public init(
        files: any FileRepository, store: any BlobStore, grace: Duration = .seconds(86_400),
        interval: Duration = .seconds(600), logger: Logger
    ) {
        self.files = files
        self.store = store
        self.grace = grace
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await Periodically.run(every: interval) {
            do {
                let removed = try await sweep()
                if removed > 0 { logger.info("orphaned uploads removed", metadata: ["count": "\(removed)"]) }
            } catch {
                logger.warning("orphan sweep failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One pass; returns how many files it removed.
    @discardableResult
    public func sweep(now: Date = Date()) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Double(grace.components.seconds))
        var removed = 0
        while true {
            let orphans = try await files.orphans(
                createdBefore: cutoff, publicCreatedBefore: max(cutoff, now.addingTimeInterval(-Self.publicGrace)),
                limit: 100)
            removed += try await FileEraser(files: files, store: store, logger: logger).erase(orphans.map(\.id))
            if orphans.count < 100 { break }
        }
        try await store.removeAbandoned(startedBefore: cutoff)
        return removed
    }
}
