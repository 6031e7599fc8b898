import Foundation
import ParleyCore

@testable import ParleyAPI

/// What Parley writes with no type to decode it into (answers it only encodes, the brokers'
/// answers, the plugin's presence event), mirrored as the documents describe it, so tests read
/// it as types like any other answer.

/// `GET /v1/search/messages` (``SearchResultBody``).
struct SearchPage: Decodable {
    struct Result: Decodable {
        let message: Message
        let room: NamedRoom
        let highlight: String
    }
    let results: [Result]
    let nextCursor: String?
}

/// A room as a report or a search result names it (``RoomSummary``).
struct NamedRoom: Decodable {
    let id: Int64
    let uid: String
    let name: String?
    let type: RoomView.Kind
}

/// `GET /v1/admin/reports`.
struct ReportsPage: Decodable {
    let reports: [ReportAnswer]
    let nextCursor: String?
}

/// A report for administrators, every key present (``ReportResponse``).
struct ReportAnswer: Decodable {
    /// The message as it was reported.
    struct Snapshot: Decodable {
        let id: Int64?
        let seq: Int64
        let sentById: Int64?
        let content: String
    }
    let id: Int64
    let status: String
    let reason: ReportReason
    let comment: String?
    let ageSeconds: Int
    let reporter: UserResponse?
    let room: NamedRoom?
    let message: Snapshot
    let resolvedAt: Date?
    let resolvedById: Int64?
    let action: ReportAction?
    let note: String?
}

/// An add that became an invitation, 202 (``InvitationResponse``).
struct InvitationAnswer: Decodable {
    let invitation: Invitation
}

/// `GET /v1/me/invitations`.
struct InvitationsPage: Decodable {
    let invitations: [Invitation]
    let nextCursor: String?
}

/// `GET /v1/admin/apps` (``ApplicationsResponse``).
struct ApplicationsAnswer: Decodable {
    let apps: [Application]
}

/// What mosquitto-go-auth reads of an answer (``BrokerAuthController/GoAuthAnswer``).
struct GoAuthReply: Decodable {
    let ok: Bool
    let error: String?
    let implies: [String]?
}

/// What EMQX reads of an answer (``BrokerAuthController/EMQXAnswer``).
struct EMQXReply: Decodable {
    let result: String
    let is_superuser: Bool?
    let expire_at: Int64?
}

/// The presence event's data (`user/{id}/online`): the broker plugin writes it, in C.
struct Presence: Codable, Sendable {
    let online: Bool
    let lastActivity: String
}
