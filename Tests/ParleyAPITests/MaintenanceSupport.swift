import Foundation
import Logging
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyTestSupport
import ParleyWorker
import Synchronization

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
    var erasure: PostgresErasureRepository {
        PostgresErasureRepository(
            rooms: PostgresRoomRepository(database: database, logger: .quiet, fileLinks: Self.fileLinks))
    }

    var exports: PostgresExportRepository { PostgresExportRepository(database: database, logger: .quiet) }

    var fileEraser: FileEraser {
        FileEraser(
            files: PostgresFileRepository(database: database, logger: .quiet), store: blobStore, logger: .quiet)
    }

    /// The maintenance role's handler over the test's stores, as `parley worker` wires
    /// it; continuations go back to ``maintenanceJobs``.
    func maintenanceHandler(stepLimit: Int = 500) -> MaintenanceHandler {
        let rooms = PostgresRoomRepository(database: database, logger: .quiet, fileLinks: Self.fileLinks)
        let files = PostgresFileRepository(database: database, logger: .quiet)
        return MaintenanceHandler(
            erasure: erasure, rooms: rooms, actions: rooms, files: fileEraser,
            export: ExportBuilder(
                exports: exports, files: files, store: blobStore, archiver: ZipArchiver(runner: ToolRunner()),
                workRoot: TestScratch.path("parley-maintenance"), logger: .quiet),
            jobs: maintenanceJobs, stepLimit: stepLimit, logger: .quiet)
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
        MaintenanceSweeper(
            erasure: erasure, exports: exports, files: fileEraser, jobs: maintenanceJobs,
            defaultRetentionDays: defaultRetentionDays, logger: .quiet)
    }
}
