import Foundation
import Logging
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import Synchronization

@testable import parley

/// Jobs a request queued, kept for the test to run.
final class RecordedJobs: JobQueue {
    private let jobs = Mutex<[String]>([])

    func enqueue(_ job: String) async throws { jobs.withLock { $0.append(job) } }

    /// Takes every job queued so far.
    func take() -> [String] {
        jobs.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }

    var count: Int { jobs.withLock { $0.count } }
}

extension APIHarness {
    /// A webhook for `message.created` to an address nothing answers, signed with a key of ones.
    func webhook() async throws -> Webhook {
        try await PostgresWebhookRepository(database: database, logger: .quiet).create(
            url: "https://hooks.example.com/x", events: [.messageCreated], description: nil,
            key: Array(repeating: 1, count: 32))
    }

    /// What the maintenance role works with, over the test's store; the test runs the jobs it
    /// keeps (``maintenanceJobs``) itself.
    func maintenancePart(stepLimit: Int = 500, defaultRetentionDays: Int? = nil) -> WorkerGraph.MaintenanceWork {
        WorkerGraph.MaintenanceWork(
            store: blobStore, runner: ToolRunner(), workDirectory: TestScratch.path("parley-maintenance"),
            retentionDefaultDays: defaultRetentionDays, interval: .seconds(300), stepLimit: stepLimit)
    }

    /// The maintenance role's handler as `parley worker` builds it; continuations go back to
    /// ``maintenanceJobs``.
    func maintenanceHandler(stepLimit: Int = 500) -> MaintenanceHandler {
        WorkerGraph.maintenanceWork(workerParts(), maintenancePart(stepLimit: stepLimit), jobs: maintenanceJobs)
            .handler
    }

    /// Runs the queued maintenance jobs and their continuations until none is left;
    /// returns how many ran.
    @discardableResult
    func runMaintenance(stepLimit: Int = 500) async throws -> Int {
        let handler = maintenanceHandler(stepLimit: stepLimit)
        var ran = 0
        for _ in 0..<1000 {
            let jobs = maintenanceJobs.take()
            if jobs.isEmpty { return ran }
            for job in jobs {
                try await handler.handle(job)
                ran += 1
            }
        }
        throw HarnessError("maintenance jobs kept queueing themselves")
    }

    func sweeper(defaultRetentionDays: Int? = nil) -> MaintenanceSweeper {
        WorkerGraph.maintenanceWork(
            workerParts(), maintenancePart(defaultRetentionDays: defaultRetentionDays), jobs: maintenanceJobs
        ).sweeper
    }
}
