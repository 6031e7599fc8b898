import Foundation
import Logging
import ParleyCore

/// Runs ``MaintenanceJob``s: erasing deleted accounts and rooms, building data exports.
///
/// A job does a bounded amount of work and queues its own continuation before it is
/// acknowledged, so no run outlives the queue's visibility timeout; a killed worker's job is
/// claimed again and finds what is left.
public struct MaintenanceHandler: Sendable {
    let erasure: any ErasureRepository
    let rooms: any RoomRepository
    let actions: any MessageActionRepository
    let files: FileEraser
    let export: ExportBuilder
    let jobs: any JobQueue
    /// Messages (or reactions) one run takes back at most.
    let stepLimit: Int
    /// Tombstones made in one transaction at most.
    static let deletionChunk = 100
    let logger: Logger

    public init(
        erasure: any ErasureRepository, rooms: any RoomRepository, actions: any MessageActionRepository,
        files: FileEraser, export: ExportBuilder, jobs: any JobQueue, stepLimit: Int = 500, logger: Logger
    ) {
        self.erasure = erasure
        self.rooms = rooms
        self.actions = actions
        self.files = files
        self.export = export
        self.jobs = jobs
        self.stepLimit = stepLimit
        self.logger = logger
    }

    public func handle(_ payload: String) async throws {
        guard let job = try? JSONCoding.decoder.decode(MaintenanceJob.self, from: Data(payload.utf8)) else {
            throw PermanentJobFailure(reason: "malformed maintenance job")
        }
        let done: Bool
        switch job.kind {
        case .eraseAccount: done = try await eraseAccount(job.id)
        case .eraseRoom: done = try await eraseRoom(job.id)
        case .export:
            try await export.build(userID: job.id)
            done = true
        }
        if !done { try await jobs.enqueue(job.json()) }
    }

    /// Returns false when work is left for a continuation.
    func eraseAccount(_ userID: Int64) async throws -> Bool {
        guard try await erasure.isAccountDeleted(userID: userID) else { return true }
        // Rooms first: once no membership is left, no send of theirs can be stored anywhere,
        // so the messages found below are all there will be.
        while true {
            let multiparty = try await erasure.multipartyRooms(ofDirectMember: userID, limit: 100)
            for roomID in multiparty {
                _ = try await rooms.removeDirectMember(roomID: roomID, userID: userID, by: userID)
            }
            if multiparty.count < 100 { break }
        }
        try await erasure.leaveRemainingRooms(userID: userID)
        // Tombstones, through the one deletion rule (events, counts, released files).
        let messages = try await erasure.liveMessages(sentBy: userID, limit: stepLimit)
        for (roomID, inRoom) in Dictionary(grouping: messages, by: \.roomID) {
            // A commit per room and chunk, not per message; a chunk holds the room's lock (which
            // its sends wait for) for some tens of milliseconds.
            for start in stride(from: 0, to: inRoom.count, by: Self.deletionChunk) {
                let chunk = inRoom[start..<min(start + Self.deletionChunk, inRoom.count)]
                try await actions.delete(messageIDs: chunk.map(\.id), roomID: roomID, by: userID)
            }
        }
        if messages.count == stepLimit { return false }
        let reactions = try await erasure.reactions(by: userID, limit: stepLimit)
        for reaction in reactions {
            _ = try await actions.setReaction(
                messageID: reaction.message.id, roomID: reaction.message.roomID, key: reaction.key, userID: userID,
                add: false, maximumKeys: .max)
        }
        if reactions.count == stepLimit { return false }
        let uploads = try await erasure.finishAccountErasure(userID: userID)
        let removed = try await files.erase(uploads)
        logger.info("account erased", metadata: ["user": "\(userID)", "files": "\(removed)"])
        return true
    }

    /// Returns false when work is left for a continuation.
    func eraseRoom(_ roomID: Int64) async throws -> Bool {
        guard try await erasure.isRoomDeleted(roomID: roomID) else { return true }
        for _ in 0..<10 {
            let purged = try await erasure.purgeMessages(roomID: roomID, createdBefore: nil, limit: stepLimit)
            try await files.erase(purged.releasedFiles)
            if purged.count < stepLimit {
                guard try await erasure.finishRoomErasure(roomID: roomID) else {
                    throw RetryLater(after: .seconds(2), reason: "the room's last events are not published yet")
                }
                logger.info("room erased", metadata: ["room": "\(roomID)"])
                return true
            }
        }
        return false
    }
}
