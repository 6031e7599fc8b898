import Foundation
import ParleyCore
import ParleyTestSupport
import Testing

struct DomainEventTests {
    @Test(arguments: DomainEvent.Name.allCases)
    func everyEventReadsBackFromWhatTheOutboxRecords(_ name: DomainEvent.Name) throws {
        let event = DomainEventSamples.sample(name)
        #expect(event.name == name)
        let read = try DomainEvent(name: name, payload: event.payload())
        #expect(read == event)
        // Delivered alike from the row as from the change (the hashes clients drop duplicates by).
        #expect(read.delivery(roomUID: "room-uid") == event.delivery(roomUID: "room-uid"))
    }

    @Test func aMembersChangeTellsTheRoomTellsTheUsersConcernedAndClosesTheBrokerToThoseRemoved() throws {
        let delivery = DomainEventSamples.sample(.membersChanged).delivery(roomUID: "room-uid")
        #expect(try delivery.roomEvents.map(change) == ["members"])
        #expect(delivery.fanout.map(\.userIDs) == [[3], [4]])
        #expect(try delivery.fanout.map { try change($0.event) } == ["added", "removed"])
        #expect(delivery.fanout.map { $0.push?.reason } == [.added, nil])
        #expect(delivery.controls == BrokerControl.roomLost(roomUID: "room-uid", userIDs: [4]))

        let roles = DomainEvent.membersChanged(
            MembersChanged(roomId: 5, byId: 0, serial: 9, addedIds: [], removedIds: [])
        )
        .delivery(roomUID: "room-uid")
        #expect(try roles.roomEvents.map(change) == ["roles"])
        #expect(roles.fanout.isEmpty && roles.controls.isEmpty)
    }

    @Test func aDeletedRoomTellsEveryMemberOnTheirOwnTopicAndTheBrokerForgetsThem() throws {
        let delivery = DomainEventSamples.sample(.roomDeleted).delivery(roomUID: "room-uid")
        #expect(try delivery.roomEvents.map(change) == ["deleted"])
        #expect(delivery.fanout.map(\.userIDs) == [[1, 2]])
        #expect(delivery.fanout.first?.event == delivery.roomEvents.first)
        #expect(delivery.controls == BrokerControl.roomLost(roomUID: "room-uid", userIDs: [1, 2]))
    }

    @Test func aNewRoomPushesBeingAddedOnlyWhenNoFirstMessageFollows() {
        let quiet = DomainEvent.roomCreated(RoomCreated(roomId: 5, byId: 1, notifiedIds: [1, 2], pushed: false))
        #expect(quiet.delivery(roomUID: "u").fanout.map { $0.push == nil } == [true])
        #expect(DomainEventSamples.sample(.roomCreated).delivery(roomUID: "u").fanout.first?.push?.reason == .added)
    }

    @Test func endedSessionsGoToTheBrokerInCommandsOfAtMost200() {
        let ended = DomainEvent.sessionsEnded(
            SessionsEnded(sessionIds: Array(1...450), clientIds: (1...3).map { "c-\($0)" }))
        let controls = ended.delivery(roomUID: nil).controls
        #expect(controls.map(\.revokeSessions.count) == [200, 200, 50])
        #expect(controls.map(\.kickClients.count) == [3, 0, 0])
        #expect(
            DomainEvent.sessionsEnded(SessionsEnded(sessionIds: [], clientIds: [])).delivery(roomUID: nil) == .init())
    }

    @Test func aBlockAndItsLiftBothMakeTheBrokerAskAgainAboutPresence() {
        for event in [DomainEventSamples.sample(.userBlocked), DomainEventSamples.sample(.userUnblocked)] {
            #expect(event.delivery(roomUID: nil).controls == [BrokerControl(invalidate: ["2 user/1/online"])])
        }
    }

    @Test func anEventOfARoomWithoutItsUidStillTellsItsUsersButNotTheBroker() {
        let delivery = DomainEventSamples.sample(.roomDeleted).delivery(roomUID: nil)
        #expect(delivery.controls.isEmpty)
        #expect(delivery.fanout.count == 1)
    }

    private func change(_ event: String) throws -> String {
        try JSONCoding.decoder.decode(Envelope<RoomEvent.Change>.self, from: Data(event.utf8)).data.change
    }
}
