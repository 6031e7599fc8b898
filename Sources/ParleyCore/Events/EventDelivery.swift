import Foundation

/// Where one ``DomainEvent`` goes: the one place that decides it, read by the outbox relay.
public struct EventDelivery: Sendable, Equatable {
    /// Published on the room's topic, in this order.
    public var roomEvents: [String] = []
    /// Commands for the broker plugin, published after the room's events.
    public var controls: [BrokerControl] = []
    /// Copies for users' notification topics, and their pushes, through the fan-out.
    public var fanout: [FanoutJob] = []

    public init(roomEvents: [String] = [], controls: [BrokerControl] = [], fanout: [FanoutJob] = []) {
        self.roomEvents = roomEvents
        self.controls = controls
        self.fanout = fanout
    }

    /// A new message's event and fan-out job, as the relay makes them from the stored row on the
    /// send path (whose outbox row names the message rather than recording this event): the
    /// event is encoded once, and the job leaves it out, as the relay's ``FanoutBatch`` carries
    /// it once. The versions and the trace are the relay's (``FanoutJob``).
    public static func newMessage(
        _ message: Message, readersVersion: Int64? = nil, pushTokensVersion: Int64? = nil, traceparent: String? = nil
    ) -> (event: String, job: FanoutJob) {
        (
            RoomEvent.newMessage(message).json(),
            FanoutJob.newMessage(
                message, readersVersion: readersVersion, pushTokensVersion: pushTokensVersion, traceparent: traceparent)
        )
    }

    /// Commands of at most this many sessions and clients each stay far under the plugin's
    /// 64 KiB.
    static let controlChunk = 200
}

extension DomainEvent {
    /// - Parameter roomUID: the uid of the event's room (``roomID``), which the broker's
    ///   topics name.
    public func delivery(roomUID: String?) -> EventDelivery {
        switch self {
        case .messageCreated(let message):
            let (event, job) = EventDelivery.newMessage(message)
            return EventDelivery(roomEvents: [event], fanout: [job.with(event: event)])
        case .messageEdited(let message):
            return EventDelivery(roomEvents: [RoomEvent.edited(message).json()])
        case .messageDeleted(let deleted):
            return EventDelivery(roomEvents: [RoomEvent.deleted(deleted).json()])
        case .reactionChanged(let change):
            return EventDelivery(roomEvents: [RoomEvent.reactionChanged(change.change, at: change.at).json()])
        case .readMarkerMoved(let read, let hidden):
            // The reader's other devices withdraw what they show of the room (only a read moves
            // the marker with this event: a member's own message moves it silently); the room
            // hears of it unless the reader shares no read state.
            let cleared = RoomEvent.notificationCleared(.init(chatRoomId: read.chatRoomId, readSeq: read.seq))
            return EventDelivery(
                roomEvents: hidden ? [] : [RoomEvent.read(read).json()],
                fanout: [
                    FanoutJob(
                        roomID: read.chatRoomId, event: cleared.json(), audience: .users, userIDs: [read.userId],
                        push: PushIntent(reason: .read, actorID: read.userId, seq: read.seq))
                ])
        case .receiptChanged(let changed):
            return EventDelivery(roomEvents: [RoomEvent.receiptChanged(changed).json()])
        case .roomCreated(let created):
            let room = created.roomId
            let added = RoomEvent.change(.added, roomID: room, by: created.byId, serial: 0).json()
            return EventDelivery(
                roomEvents: [RoomEvent.change(.created, roomID: room, by: created.byId, serial: 0).json()],
                fanout: [
                    FanoutJob(
                        roomID: room, event: added, audience: .users, userIDs: created.notifiedIds,
                        push: created.pushed ? PushIntent(reason: .added, actorID: created.byId) : nil)
                ])
        case .roomChanged(let changed):
            let kind = RoomEvent.ChangeKind(rawValue: changed.change.rawValue) ?? .renamed
            return EventDelivery(
                roomEvents: [
                    RoomEvent.change(kind, roomID: changed.roomId, by: changed.byId, serial: changed.serial).json()
                ])
        case .roomDeleted(let deleted):
            let event = RoomEvent.change(.deleted, roomID: deleted.roomId, by: deleted.byId, serial: deleted.serial)
                .json()
            // On the room topic for clients still subscribed, and to every member's own topic.
            return EventDelivery(
                roomEvents: [event], controls: Self.roomLost(roomUID, deleted.memberIds),
                fanout: deleted.memberIds.isEmpty
                    ? []
                    : [FanoutJob(roomID: deleted.roomId, event: event, audience: .users, userIDs: deleted.memberIds)])
        case .membersChanged(let changed):
            return changed.delivery(roomLost: Self.roomLost(roomUID, changed.removedIds))
        case .invitationCreated(let created):
            let event = Envelope(type: "invitation", data: created.invitation, identity: "\(created.invitation.id)")
            return EventDelivery(fanout: [
                FanoutJob(
                    roomID: created.invitation.room.id, event: event.json(), audience: .users,
                    userIDs: [created.inviteeId])
            ])
        case .userBlocked(let block), .userUnblocked(let block):
            // The broker forgets whether the blocked user may read the blocker's presence: after a
            // block its deliveries stop and a new subscription asks again (and is refused); after
            // an unblock, subscribing again succeeds.
            return EventDelivery(controls: [
                BrokerControl(invalidate: ["\(block.blockedId) \(Topic.presence(block.blockerId))"])
            ])
        case .sessionsEnded(let ended):
            let size = EventDelivery.controlChunk
            return EventDelivery(
                controls: stride(from: 0, to: max(ended.sessionIds.count, ended.clientIds.count), by: size).map {
                    BrokerControl(
                        revokeSessions: ended.sessionIds.dropFirst($0).prefix(size).map(String.init),
                        kickClients: Array(ended.clientIds.dropFirst($0).prefix(size)))
                })
        case .reportFiled:
            // For the administrators' consumers (webhooks); no client hears of it.
            return EventDelivery()
        case .privacyChanged(let changed):
            // Whoever follows the user's presence is asked again at the next delivery, and
            // refused if the new setting excludes them.
            return EventDelivery(controls: [BrokerControl(invalidate: [BrokerControl.presenceOf(changed.userId)])])
        }
    }

    /// Stops the broker's deliveries of the room to users who lost it.
    private static func roomLost(_ roomUID: String?, _ userIDs: [Int64]) -> [BrokerControl] {
        guard let roomUID else { return [] }
        return BrokerControl.roomLost(roomUID: roomUID, userIDs: userIDs)
    }
}

extension MembersChanged {
    fileprivate func delivery(roomLost: [BrokerControl]) -> EventDelivery {
        let kind: RoomEvent.ChangeKind = addedIds.isEmpty && removedIds.isEmpty ? .roles : .members
        var delivery = EventDelivery(
            roomEvents: [RoomEvent.change(kind, roomID: roomId, by: byId, serial: serial).json()], controls: roomLost)
        for (users, notice) in [(addedIds, RoomEvent.ChangeKind.added), (removedIds, .removed)] where !users.isEmpty {
            delivery.fanout.append(
                FanoutJob(
                    roomID: roomId, event: RoomEvent.change(notice, roomID: roomId, by: byId, serial: serial).json(),
                    audience: .users, userIDs: users,
                    push: notice == .added ? PushIntent(reason: .added, actorID: byId) : nil))
        }
        return delivery
    }
}
