import Foundation

/// Why a message is reported.
public enum ReportReason: String, Sendable, Codable, CaseIterable {
    case spam, abuse, illegal, other
}

/// What an administrator did about a report.
public enum ReportAction: String, Sendable, Codable, CaseIterable {
    case dismiss
    /// The message becomes a tombstone.
    case deleteMessage = "delete-message"
    /// The message's sender can no longer sign in.
    case deactivateUser = "deactivate-user"
}

/// A report of a message, with the message as it was when reported.
public struct Report: Sendable, Equatable {
    public struct Snapshot: Sendable, Equatable {
        public let messageID: Int64?
        public let seq: Int64
        public let sentById: Int64?
        public let content: String
        public let fileID: Int64?
        public let createdAt: Date

        public init(messageID: Int64?, seq: Int64, sentById: Int64?, content: String, fileID: Int64?, createdAt: Date) {
            self.messageID = messageID
            self.seq = seq
            self.sentById = sentById
            self.content = content
            self.fileID = fileID
            self.createdAt = createdAt
        }
    }

    public struct Resolution: Sendable, Equatable {
        public let at: Date
        public let byID: Int64?
        public let action: ReportAction
        public let note: String?

        public init(at: Date, byID: Int64?, action: ReportAction, note: String?) {
            self.at = at
            self.byID = byID
            self.action = action
            self.note = note
        }
    }

    public let id: Int64
    public let reason: ReportReason
    public let comment: String?
    public let createdAt: Date
    public let reporter: User?
    /// The room, if it still exists.
    public let room: RoomSummary?
    public let message: Snapshot
    public let resolution: Resolution?

    public init(
        id: Int64, reason: ReportReason, comment: String?, createdAt: Date, reporter: User?,
        room: RoomSummary?, message: Snapshot, resolution: Resolution?
    ) {
        self.id = id
        self.reason = reason
        self.comment = comment
        self.createdAt = createdAt
        self.reporter = reporter
        self.room = room
        self.message = message
        self.resolution = resolution
    }
}

/// Reports of messages (`messenger.report`).
public protocol ReportRepository: Sendable {
    /// Records a report of the message as it stands now; nothing when this reporter reported
    /// it before. False when the room holds no such message.
    func report(messageID: Int64, roomID: Int64, by reporterID: Int64, reason: ReportReason, comment: String?)
        async throws -> Bool
    /// Open reports oldest first, or resolved ones newest first, after the report `after`.
    func reports(resolved: Bool, after: Int64?, limit: Int) async throws -> [Report]
    func report(id: Int64) async throws -> Report?
    /// Records the resolution; false when the report was resolved already.
    func resolve(id: Int64, action: ReportAction, note: String?, by adminID: Int64) async throws -> Bool
    /// Takes a resolution back (its action failed).
    func reopen(id: Int64) async throws
}
