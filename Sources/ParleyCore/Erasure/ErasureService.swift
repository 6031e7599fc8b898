import Foundation

/// Deleting accounts and rooms, retention and data exports, as the API asks for them: what
/// must hold at once happens in the request (sessions ended, the room gone for its members),
/// the rest is a ``MaintenanceJob``.
///
/// A job that cannot be queued (Redis down) is not lost: the maintenance sweep queues every
/// erasure and export still pending after a minute.
public struct ErasureService: Sendable {
    let erasure: any ErasureRepository
    let exports: any ExportRepository
    let accounts: AccountService
    let rooms: RoomService
    let jobs: (any JobQueue)?

    public init(
        erasure: any ErasureRepository, exports: any ExportRepository, accounts: AccountService, rooms: RoomService,
        jobs: (any JobQueue)?
    ) {
        self.erasure = erasure
        self.exports = exports
        self.accounts = accounts
        self.rooms = rooms
        self.jobs = jobs
    }

    /// What says the caller of `DELETE /v1/me` is the account's owner, not a stolen access token.
    public enum OwnerProof: Sendable {
        case password(String)
        /// A fresh token of a trusted issuer for the account's identity: an account made by
        /// token exchange or the server API has no password.
        case issuerToken(String)
    }

    /// The user deletes their own account; the proof says it is them.
    public func deleteOwnAccount(userID: Int64, proof: OwnerProof, clientAddress: String?) async throws {
        switch proof {
        case .password(let password):
            guard try await accounts.verifyPassword(password, userID: userID, clientAddress: clientAddress) else {
                throw ParleyError(.invalidCredentials, "The current password is wrong.")
            }
        case .issuerToken(let token):
            guard try await accounts.verifyIssuerToken(token, userID: userID, clientAddress: clientAddress) else {
                throw ParleyError(.invalidCredentials, "The token is not a valid token of this account's identity.")
            }
        }
        try await deleteAccount(userID: userID)
    }

    /// An administrator deletes an account (not their own: that is `DELETE /v1/me`).
    public func deleteAccount(userID: Int64, byAdmin adminID: Int64) async throws {
        guard userID != adminID else {
            throw ParleyError.invalidRequest("Administrators delete their own account with DELETE /v1/me.")
        }
        try await deleteAccount(userID: userID)
    }

    /// Again for a deleted account ends its sessions again: a request that failed after the
    /// account ended (Redis or the broker away) can be repeated.
    private func deleteAccount(userID: Int64) async throws {
        if try await !erasure.endAccount(userID: userID) {
            guard try await erasure.isAccountDeleted(userID: userID) else {
                throw ParleyError.notFound("No such user.")
            }
        }
        try await accounts.endSessions(of: userID)
        await queue(MaintenanceJob(.eraseAccount, id: userID))
    }

    /// An admin of a multiparty room deletes it.
    public func deleteRoom(roomID: Int64, by userID: Int64) async throws {
        try await rooms.requireAdminOfMultiparty(roomID: roomID, userID: userID)
        guard try await erasure.endRoom(roomID: roomID, by: userID) else { throw ParleyError.notFound("No such room.") }
        await queue(MaintenanceJob(.eraseRoom, id: roomID))
    }

    /// The room's own retention (nil: the server's default), for its readers.
    public func retention(roomID: Int64, for userID: Int64) async throws -> Int? {
        try await rooms.require(.reader, roomID: roomID, userID: userID)
        return try await erasure.retentionDays(roomID: roomID)
    }

    public func setRetention(roomID: Int64, days: Int?, by userID: Int64) async throws {
        try await rooms.require(.admin, roomID: roomID, userID: userID)
        if let days, !Self.retentionDays.contains(days) {
            throw ParleyError.invalidRequest("maxAgeDays must be 1 to 36500, or null.", field: "maxAgeDays")
        }
        try await erasure.setRetentionDays(roomID: roomID, days: days)
    }

    public static let retentionDays = 1...36_500

    public func requestExport(userID: Int64) async throws {
        if try await exports.request(userID: userID) { await queue(MaintenanceJob(.export, id: userID)) }
    }

    public func export(userID: Int64) async throws -> DataExport {
        guard let export = try await exports.find(userID: userID) else {
            throw ParleyError.notFound("No export was requested; POST /v1/me/export starts one.")
        }
        return export
    }

    private func queue(_ job: MaintenanceJob) async {
        try? await jobs?.enqueue(job.json())
    }
}
