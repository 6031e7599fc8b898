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

/// Where exports are recorded, and what goes into them.
public protocol ExportRepository: Sendable {
    /// Starts an export unless one is pending (one at a time); a finished one is replaced
    /// (its ZIP is released to the orphan sweep). Returns whether a new one was started.
    func request(userID: Int64) async throws -> Bool
    func find(userID: Int64) async throws -> DataExport?
    /// The user's data as JSON documents: profile, devices, rooms with the messages the
    /// user sent, reactions, and the metadata of their files.
    func documents(userID: Int64) async throws -> [ExportDocument]
    /// The files the user uploaded, whose content goes into the ZIP.
    func files(userID: Int64) async throws -> [StoredFile]
    /// Records the ZIP, if the export is still pending.
    func complete(userID: Int64, fileID: Int64, expiresAt: Date) async throws -> Bool
    func fail(userID: Int64) async throws
    /// Pending exports requested before `cutoff` (a job lost with Redis is queued again).
    func pending(requestedBefore cutoff: Date, limit: Int) async throws -> [Int64]
    /// Deletes exports whose download expired; returns their files, released for erasure.
    func expire(now: Date, limit: Int) async throws -> [Int64]
}

/// Packs a directory into a ZIP (the export's container), outside the worker's process.
public protocol Archiver: Sendable {
    /// Writes `directory`'s files, with their paths relative to it, into the ZIP at `path`.
    func zip(directory: String, into path: String) async throws
}
