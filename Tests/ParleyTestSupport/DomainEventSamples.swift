import Foundation
import ParleyCore

/// One event of each name of the vocabulary: the switch is exhaustive, so a new event does not
/// compile here until it has a sample, and then every test over the samples covers it.
public enum DomainEventSamples {
    public static let message = Message(
        id: 7, seq: 3, chatRoomId: 5, chatRoomUid: "room-uid", sentById: 1, content: "hi", uid: "m-1", fileId: nil,
        createdAt: Date(timeIntervalSince1970: 1_700_000_000))

    public static var all: [DomainEvent] { DomainEvent.Name.allCases.map(sample) }

    public static func sample(_ name: DomainEvent.Name) -> DomainEvent {
        let at = Date(timeIntervalSince1970: 1_700_000_000.25)
        switch name {
        case .messageCreated: return .messageCreated(message)
        case .messageEdited: return .messageEdited(message)
        case .messageDeleted:
            return .messageDeleted(RoomEvent.Deleted(id: 7, seq: 3, chatRoomId: 5, deletedAt: at, deletedById: 1))
        case .reactionChanged:
            return .reactionChanged(
                ReactionChange(
                    RoomEvent.ReactionChanged(messageId: 7, chatRoomId: 5, key: "👍", userId: 2, added: true, count: 1),
                    at: at))
        case .readMarkerMoved:
            return .readMarkerMoved(
                RoomEvent.Read(marker: ReadMarker(messageId: 7, seq: 3), userID: 2, roomID: 5, at: at))
        case .receiptChanged:
            return .receiptChanged(RoomEvent.ReceiptChanged(chatRoomId: 5, userId: 2, readSeq: 2, deliveredSeq: 3))
        case .roomCreated: return .roomCreated(RoomCreated(roomId: 5, byId: 1, notifiedIds: [1, 2], pushed: true))
        case .roomChanged: return .roomChanged(RoomChanged(roomId: 5, byId: 1, change: .renamed, serial: 9))
        case .roomDeleted: return .roomDeleted(RoomDeleted(roomId: 5, byId: 1, serial: 9, memberIds: [1, 2]))
        case .membersChanged:
            return .membersChanged(MembersChanged(roomId: 5, byId: 1, serial: 9, addedIds: [3], removedIds: [4]))
        case .invitationCreated:
            return .invitationCreated(
                InvitationCreated(
                    inviteeId: 3,
                    invitation: Invitation(
                        id: 11, room: .init(id: 5, name: "Team", type: .multiparty),
                        inviter: .init(id: 1, firstName: "Ada", lastName: "L"), createdAt: at)))
        case .userBlocked: return .userBlocked(Blocking(blockerId: 1, blockedId: 2))
        case .userUnblocked: return .userUnblocked(Blocking(blockerId: 1, blockedId: 2))
        case .sessionsEnded: return .sessionsEnded(SessionsEnded(sessionIds: [8], clientIds: ["c-8"]))
        case .reportFiled:
            return .reportFiled(ReportFiled(id: 4, messageId: 7, chatRoomId: 5, reporterId: 2, reason: "spam"))
        case .privacyChanged:
            return .privacyChanged(
                PrivacyChanged(userId: 2, privacy: Privacy(readReceipts: .nobody, typing: .off, presence: .nobody)))
        }
    }
}
