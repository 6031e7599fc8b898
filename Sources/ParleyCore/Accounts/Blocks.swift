import Foundation

/// Who a user blocked (`messenger.user_block`). A blocked user cannot open or write in a
/// two-party room with the blocker, sees no presence of the blocker and pushes them nothing;
/// in multiparty rooms their messages still arrive (clients hide them).
public protocol BlockRepository: Sendable {
    /// Blocks `blockedID` for `blockerID` (again: nothing changes) and stops the broker's
    /// deliveries of the blocker's presence to them; throws `not-found` for an unknown user.
    func block(_ blockedID: Int64, by blockerID: Int64) async throws
    func unblock(_ blockedID: Int64, by blockerID: Int64) async throws
    /// Users `blockerID` blocked, by id after `after`.
    func blocked(by blockerID: Int64, after: Int64?, limit: Int) async throws -> [User]
}

/// The rules of blocking: nobody blocks themselves.
public struct BlockService: Sendable {
    let blocks: any BlockRepository

    public init(blocks: any BlockRepository) { self.blocks = blocks }

    public func block(_ userID: Int64, by blockerID: Int64) async throws {
        guard userID != blockerID else {
            throw ParleyError.invalidRequest("one cannot block oneself", field: "userId")
        }
        try await blocks.block(userID, by: blockerID)
    }

    public func unblock(_ userID: Int64, by blockerID: Int64) async throws {
        try await blocks.unblock(userID, by: blockerID)
    }

    public func blocked(by blockerID: Int64, after: Int64?, limit: Int) async throws -> [User] {
        try await blocks.blocked(by: blockerID, after: after, limit: limit)
    }

    /// What a blocked user is told when a two-party room with the blocker refuses them.
    public static let refusal = ParleyError(.blocked, "This user has blocked you.")
}
