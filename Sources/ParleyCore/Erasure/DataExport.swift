import Foundation

/// A user's copy of their data: a ZIP built by a job, downloadable until `expiresAt`.
public struct DataExport: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        case pending, ready, failed
    }

    public let status: Status
    public let requestedAt: Date
    /// The ZIP, a file of the user's; set when ready.
    public let fileID: Int64?
    public let expiresAt: Date?

    public init(status: Status, requestedAt: Date, fileID: Int64?, expiresAt: Date?) {
        self.status = status
        self.requestedAt = requestedAt
        self.fileID = fileID
        self.expiresAt = expiresAt
    }
}

/// One JSON document of an export, named as in the ZIP.
public struct ExportDocument: Sendable, Equatable {
    public let name: String
    public let json: String

    public init(name: String, json: String) {
        self.name = name
        self.json = json
    }
}

/// An export made ready, and the ZIP of the one it replaced (nil for a first one).
public struct CompletedExport: Sendable, Equatable {
    public let replacedFileID: Int64?

    public init(replacedFileID: Int64?) { self.replacedFileID = replacedFileID }
}

/// Where exports are recorded, and what goes into them.
public protocol ExportRepository: Sendable {
    /// Starts an export unless one is pending (one at a time); a finished one is replaced
    /// (its ZIP stays held until the new one is ready). Returns whether one was started.
    func request(userID: Int64) async throws -> Bool
    func find(userID: Int64) async throws -> DataExport?
    /// The user's data as JSON documents: profile, devices, rooms with the messages the
    /// user sent, and reactions (the files' metadata is written with their content).
    func documents(userID: Int64) async throws -> [ExportDocument]
    /// The files the user uploaded, whose content goes into the ZIP (not earlier exports).
    func files(userID: Int64) async throws -> [StoredFile]
    /// Records the ZIP, if the export is still pending; returns nil when it is not, else the
    /// previous export's ZIP, released.
    func complete(userID: Int64, fileID: Int64, expiresAt: Date) async throws -> CompletedExport?
    func fail(userID: Int64) async throws
    /// Pending exports requested before `cutoff` (a job lost with Redis is queued again).
    func pending(requestedBefore cutoff: Date, limit: Int) async throws -> [Int64]
    /// Deletes exports whose download expired, and fails those pending for a day (a job that
    /// kept failing); returns the expired ones' files, released for erasure.
    func expire(now: Date, limit: Int) async throws -> [Int64]
}

/// Packs a directory into a ZIP (the export's container), outside the worker's process.
public protocol Archiver: Sendable {
    /// Writes `directory`'s files, with their paths relative to it, into the ZIP at `path`.
    func zip(directory: String, into path: String) async throws
}
