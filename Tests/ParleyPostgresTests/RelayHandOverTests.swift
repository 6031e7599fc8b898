import Foundation
import ParleyCore
import Testing

@testable import ParleyPostgres

/// What a send stored beside the active relay hands it (``LocalRelay``): the relay takes the
/// messages of a read's leading rows, reads in full after a `NOTIFY` or when it takes the lock,
/// and what it holds stays bounded.
struct RelayHandOverTests {
    let start = ContinuousClock.now

    func message(_ id: Int64) -> Message {
        Message(
            id: id, seq: id, chatRoomId: 1, chatRoomUid: "room", sentById: 2, content: "m\(id)", uid: "u\(id)",
            fileId: nil, createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test func aReadTakesTheMessagesOfItsLeadingRowsAndStopsAtTheFirstMissing() {
        let local = LocalRelay()
        local.committed(handingOver: [message(1), message(2), message(4)], at: start)
        // Row 3 is a domain event (no message); row 5's message is not here yet.
        let (count, messages) = local.take(leading: [1, 2, nil, 4, 5, 6])
        #expect(count == 4)
        #expect(messages == [1: message(1), 2: message(2), 4: message(4)])
        // Taken out: a second read finds none of them.
        #expect(local.take(leading: [1]).count == 0)
        local.committed(handingOver: [message(5)], at: start)
        #expect(local.take(leading: [5, 6]).count == 1)
    }

    @Test func aReadWhoseFirstMessageIsMissingTakesNothing() {
        let local = LocalRelay()
        local.committed(handingOver: [message(2)], at: start)
        let (count, messages) = local.take(leading: [1, 2])
        #expect(count == 0 && messages.isEmpty)
        #expect(local.take(leading: [2]).messages == [2: message(2)], "a read that took nothing left it")
    }

    @Test func aNotifyOrTakingTheLockMakesTheNextReadFull() {
        let local = LocalRelay()
        local.activated(true)
        #expect(!local.mayReadRowsOnly(), "the first read after taking the lock catches up in full")
        #expect(local.mayReadRowsOnly())
        local.heardNotify()
        #expect(!local.mayReadRowsOnly(), "another process's commit names messages not handed over")
        #expect(local.mayReadRowsOnly())
    }

    @Test func lettingGoOrTakingTheLockDropsWhatWasHandedOver() {
        let local = LocalRelay()
        local.activated(true)
        local.committed(handingOver: [message(1)], at: start)
        local.activated(false)
        #expect(local.take(leading: [1]).count == 0)
    }

    @Test func aFullReadDiscardsTheMessagesItRead() {
        let local = LocalRelay()
        local.committed(handingOver: [message(1), message(2)], at: start)
        local.discard([1])
        #expect(local.take(leading: [1]).count == 0)
        #expect(local.take(leading: [2]).count == 1)
    }

    @Test func whatItHoldsIsBoundedAndStaleMessagesMakeRoom() {
        let local = LocalRelay()
        let limit = Int64(LocalRelay.handOverLimit)
        local.committed(handingOver: (1...limit).map(message), at: start)
        // Full: a send hands nothing over while nothing held is stale.
        local.committed(handingOver: [message(limit + 1)], at: start + .seconds(1))
        #expect(local.take(leading: [limit + 1]).count == 0)
        #expect(local.take(leading: [limit]).count == 1)
        // Those held past `staleAfter` were read back in full: they go to make room.
        local.committed(handingOver: [message(limit + 2), message(limit + 3)], at: start + LocalRelay.staleAfter)
        #expect(local.take(leading: [limit + 2, limit + 3]).count == 2)
        #expect(local.take(leading: [1]).count == 0)
    }
}
