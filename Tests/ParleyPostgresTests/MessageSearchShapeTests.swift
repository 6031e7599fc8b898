import Testing

@testable import ParleyPostgres

/// How a search reads the index, by how many messages the caller's rooms hold.
struct MessageSearchShapeTests {
    @Test func fewMessagesAreReadWholeManyFromTheNewestBackwards() {
        #expect(MessageSearchShape.choose(roomRows: 0, newestID: 0) == .rooms)
        #expect(MessageSearchShape.choose(roomRows: 100_000, newestID: 1_000_000_000) == .rooms)
        // Half of all messages: the window holds twice the caller's share.
        #expect(MessageSearchShape.choose(roomRows: 500_000, newestID: 1_000_000) == .newest(window: 40_000))
        // All of them (or more than the newest id suggests): no smaller than the share itself.
        #expect(MessageSearchShape.choose(roomRows: 2_000_000, newestID: 1_000_000) == .newest(window: 20_000))
        // A small share would reach further back than the rooms hold: the rooms are read.
        #expect(MessageSearchShape.choose(roomRows: 200_000, newestID: 100_000_000) == .rooms)
        #expect(MessageSearchShape.choose(roomRows: 200_000, newestID: 1_000_000) == .newest(window: 100_000))
    }
}
