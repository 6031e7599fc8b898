import Foundation

/// What others see of a user (`GET`/`PATCH /v1/me/privacy`): whether their read state is
/// shared, whether their typing is relayed, and who may follow their presence.
public struct Privacy: Codable, Sendable, Equatable {
    public enum ReadReceipts: String, Codable, Sendable, CaseIterable {
        case everyone, nobody
    }

    public enum Typing: String, Codable, Sendable, CaseIterable {
        case on, off
    }

    /// Who may subscribe to `user/{id}/online`; the user always may.
    public enum Presence: String, Codable, Sendable, CaseIterable {
        case everyone
        /// Users who share a room with them by any path, archived rooms included.
        case roomMates = "room-mates"
        case nobody
    }

    public var readReceipts: ReadReceipts
    public var typing: Typing
    public var presence: Presence

    public init(readReceipts: ReadReceipts = .everyone, typing: Typing = .on, presence: Presence = .roomMates) {
        self.readReceipts = readReceipts
        self.typing = typing
        self.presence = presence
    }

    /// A new account's: its read state and typing shared, its presence with room-mates.
    public static let standard = Privacy()

    /// What is present changes.
    public func applying(_ change: PrivacyChange) -> Privacy {
        Privacy(
            readReceipts: change.readReceipts ?? readReceipts, typing: change.typing ?? typing,
            presence: change.presence ?? presence)
    }
}

/// `PATCH /v1/me/privacy`: the settings present change, the rest stay.
public struct PrivacyChange: Codable, Sendable, Equatable {
    public var readReceipts: Privacy.ReadReceipts?
    public var typing: Privacy.Typing?
    public var presence: Privacy.Presence?

    public init(
        readReceipts: Privacy.ReadReceipts? = nil, typing: Privacy.Typing? = nil, presence: Privacy.Presence? = nil
    ) {
        self.readReceipts = readReceipts
        self.typing = typing
        self.presence = presence
    }
}

/// A user's privacy as stored (`cloud.user_account`), and the one question the broker asks of it.
public protocol PrivacyRepository: Sendable {
    /// Throws `not-found` for an unknown user.
    func privacy(of userID: Int64) async throws -> Privacy
    /// Stores the new settings and records ``DomainEvent/privacyChanged(_:)`` when they
    /// changed, in one transaction; returns what holds now.
    func change(_ userID: Int64, _ change: PrivacyChange) async throws -> Privacy
    /// Whether `viewerID` may follow `ownerID`'s presence: the owner's ``Privacy/presence``
    /// allows them and the owner did not block them. False for an unknown owner.
    func maySeePresence(of ownerID: Int64, viewer viewerID: Int64) async throws -> Bool
}

/// The rules of privacy: each user reads and changes their own.
public struct PrivacyService: Sendable {
    let privacy: any PrivacyRepository

    public init(privacy: any PrivacyRepository) { self.privacy = privacy }

    public func privacy(of userID: Int64) async throws -> Privacy {
        try await privacy.privacy(of: userID)
    }

    public func change(_ userID: Int64, _ change: PrivacyChange) async throws -> Privacy {
        guard change.readReceipts != nil || change.typing != nil || change.presence != nil else {
            throw ParleyError.invalidRequest("Name readReceipts, typing or presence.")
        }
        return try await privacy.change(userID, change)
    }

    /// Whether the user's typing notices are relayed.
    public func sharesTyping(_ userID: Int64) async throws -> Bool {
        try await privacy.privacy(of: userID).typing == .on
    }
}

/// A user changed their privacy: the broker forgets who may follow their presence, and asks
/// again at the next delivery.
public struct PrivacyChanged: Codable, Sendable, Equatable {
    public let userId: Int64
    public let privacy: Privacy

    public init(userId: Int64, privacy: Privacy) {
        self.userId = userId
        self.privacy = privacy
    }
}
