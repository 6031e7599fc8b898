import Foundation

/// Reports of messages and what administrators do about them (Apple's App Review Guideline
/// 1.2: people report content, the operator acts on it).
public struct ModerationService: Sendable {
    let reports: any ReportRepository
    let rooms: RoomService
    let actions: any MessageActionRepository
    let accounts: AccountService

    public init(
        reports: any ReportRepository, rooms: RoomService, actions: any MessageActionRepository,
        accounts: AccountService
    ) {
        self.reports = reports
        self.rooms = rooms
        self.actions = actions
        self.accounts = accounts
    }

    /// A reader reports a message of the room; again is no new report.
    public func report(roomID: Int64, messageID: Int64, reason: String, comment: String?, by userID: Int64)
        async throws
    {
        guard let reason = ReportReason(rawValue: reason) else {
            throw ParleyError.invalidRequest("reason must be spam, abuse, illegal or other", field: "reason")
        }
        let comment = try comment.map { try TextRule.validated($0, field: "comment", length: 0...1000) }
        try await rooms.require(.reader, roomID: roomID, userID: userID)
        guard
            try await reports.report(
                messageID: messageID, roomID: roomID, by: userID, reason: reason, comment: comment)
        else { throw MessageActionService.noSuchMessage }
    }

    public func list(resolved: Bool, after: Int64?, limit: Int) async throws -> [Report] {
        try await reports.reports(resolved: resolved, after: after, limit: limit)
    }

    /// Acts on the report (deletes the message, or deactivates its sender) and records who
    /// resolved it; a resolved report is not resolved again (409).
    public func resolve(id: Int64, action: String, note: String?, by adminID: Int64) async throws -> Report {
        guard let action = ReportAction(rawValue: action) else {
            throw ParleyError.invalidRequest(
                "action must be dismiss, delete-message or deactivate-user", field: "action")
        }
        let note = try note.map { try TextRule.validated($0, field: "note", length: 0...1000) }
        guard let report = try await reports.report(id: id) else { throw ParleyError.notFound("No such report.") }
        // Claimed before acting: of two administrators resolving at once, one acts, the other
        // gets 409. An action that fails gives the report back.
        guard try await reports.resolve(id: id, action: action, note: note, by: adminID) else {
            throw ParleyError.conflict(.conflict, "The report is resolved already.")
        }
        do {
            try await act(action, on: report, by: adminID)
        } catch {
            try? await reports.reopen(id: id)
            throw error
        }
        guard let resolved = try await reports.report(id: id) else { throw ParleyError.notFound("No such report.") }
        return resolved
    }

    private func act(_ action: ReportAction, on report: Report, by adminID: Int64) async throws {
        switch action {
        case .dismiss:
            break
        case .deleteMessage:
            // A message gone with its room has nothing left to delete.
            if let messageID = report.message.messageID, let roomID = report.room?.id {
                try await actions.delete(messageID: messageID, roomID: roomID, by: adminID)
            }
        case .deactivateUser:
            if let senderID = report.message.sentById { try await accounts.setDeactivated(userID: senderID, true) }
        }
    }
}
