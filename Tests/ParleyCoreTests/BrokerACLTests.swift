import ParleyCore
import Testing

/// The ACL table of `mqtt-protocol.md`, topic by topic.
struct BrokerACLTests {
    let uid = "AbCdEfGhIjKlMnOpQrStUv"
    let me: Int64 = 7

    func decide(_ topic: String, _ access: BrokerACL.Access, user: Int64? = 7, server: Bool = false)
        -> BrokerACL.Decision
    {
        BrokerACL.decide(topic: topic, access: access, userID: user, isServer: server)
    }

    @Test func roomTopicsAreReadByMembersAndWrittenByTheServerOnly() {
        let room = "chat-room/\(uid)"
        #expect(decide(room, .subscribe) == .requiresRoomRole(roomUID: uid, minimum: .reader))
        #expect(decide(room, .read) == .requiresRoomRole(roomUID: uid, minimum: .reader))
        #expect(decide(room, .write) == .deny)
        #expect(decide(room, .write, server: true) == .allow)
    }

    /// What an allowed question implies is what a broker's cache keeps without asking: each
    /// implied grant must ask the same of the same user as the question that implied it.
    @Test(arguments: ChatInSender.allCases)
    func whatAnAnswerImpliesAsksTheSameAsTheAnswer(senders: ChatInSender) {
        let topics = [
            "chat-room/\(uid)", "chat-in/\(uid)", "chat-in/\(uid)/\(me)", "messenger-notifications/\(me)",
            "user/\(me)/online", "user/8/online",
        ]
        var implied = 0
        for topic in topics {
            for access in BrokerACL.Access.allCases {
                for user: Int64 in [me, 8] {
                    for grant in BrokerACL.implied(by: topic, access: access, userID: user, senders: senders) {
                        implied += 1
                        #expect(grant.topic != topic || grant.access != access)
                        #expect(
                            BrokerACL.decide(
                                topic: topic, access: access, userID: user, isServer: false, senders: senders)
                                == BrokerACL.decide(
                                    topic: grant.topic, access: grant.access, userID: user, isServer: false,
                                    senders: senders))
                    }
                }
            }
        }
        #expect(implied == 2)
    }

    /// A room's subscriber may write its input, in the form the broker's sender vouching takes.
    @Test func aRoomsSubscriptionImpliesItsInput() {
        #expect(
            BrokerACL.implied(by: "chat-room/\(uid)", access: .subscribe, userID: me, senders: .plugin)
                == [BrokerACL.Grant(topic: "chat-in/\(uid)", access: .write)])
        #expect(
            BrokerACL.implied(by: "chat-room/\(uid)", access: .subscribe, userID: me, senders: .topic)
                == [BrokerACL.Grant(topic: "chat-in/\(uid)/\(me)", access: .write)])
        #expect(BrokerACL.implied(by: "chat-room/\(uid)", access: .read, userID: me).isEmpty)
        #expect(BrokerACL.implied(by: "chat-room/\(uid)", access: .subscribe, userID: nil).isEmpty)
    }

    /// A member who loses a room loses what its subscription implied too (the plugin caches
    /// implied grants; the room-loss command must name each of them).
    @Test func whatARoomsSubscriptionImpliesIsDroppedWhenTheRoomIsLost() {
        let dropped = BrokerControl.roomLost(roomUID: uid, userIDs: [me]).flatMap(\.invalidate)
        for senders in ChatInSender.allCases {
            for grant in BrokerACL.implied(by: "chat-room/\(uid)", access: .subscribe, userID: me, senders: senders) {
                #expect(dropped.contains("\(me) \(grant.topic)"))
            }
        }
    }

    @Test func chatInIsWrittenByMembersAndReadByTheServersIngestOnly() {
        let input = "chat-in/\(uid)"
        #expect(decide(input, .write) == .requiresRoomRole(roomUID: uid, minimum: .reader))
        #expect(decide(input, .subscribe) == .deny)
        #expect(decide(input, .read) == .deny)
        #expect(decide("$share/parley-ingest/chat-in/+", .subscribe, server: true) == .allow)
        #expect(decide("$share/parley-ingest/chat-in/+", .subscribe) == .deny)
    }

    @Test func aChatInTopicNamingItsSenderIsWrittenByThatUserOnly() {
        #expect(decide("chat-in/\(uid)/7", .write) == .requiresRoomRole(roomUID: uid, minimum: .reader))
        #expect(decide("chat-in/\(uid)/8", .write) == .deny)
        #expect(decide("chat-in/\(uid)/7", .subscribe) == .deny)
        #expect(decide("chat-in/\(uid)/7", .read) == .deny)
        #expect(decide("chat-in/\(uid)/+", .subscribe) == .deny)
        #expect(decide("$share/parley-ingest/chat-in/+/+", .subscribe, server: true) == .allow)
        // Where the topic vouches for the sender, the topic naming nobody is not written.
        let topicMode = { (topic: String) in
            BrokerACL.decide(topic: topic, access: .write, userID: 7, isServer: false, senders: .topic)
        }
        #expect(topicMode("chat-in/\(uid)") == .deny)
        #expect(topicMode("chat-in/\(uid)/7") == .requiresRoomRole(roomUID: uid, minimum: .reader))
    }

    @Test func notificationsAreForTheirUserOnly() {
        #expect(decide("messenger-notifications/7", .subscribe) == .allow)
        #expect(decide("messenger-notifications/7", .read) == .allow)
        #expect(decide("messenger-notifications/7", .write) == .deny)
        #expect(decide("messenger-notifications/8", .subscribe) == .deny)
        #expect(decide("messenger-notifications/07", .subscribe) == .deny)
    }

    @Test func presenceIsReadAsItsUsersPrivacyAllowsAndWrittenByItsUser() {
        #expect(decide("user/8/online", .subscribe) == .presenceOf(userID: 8))
        #expect(decide("user/8/online", .read) == .presenceOf(userID: 8))
        #expect(decide("user/7/online", .write) == .allow)
        #expect(decide("user/8/online", .write) == .deny)
        #expect(decide("user/x/online", .subscribe) == .deny)
        #expect(decide("user/7/offline", .subscribe) == .deny)
    }

    @Test(arguments: [
        "#", "+", "chat-room/+", "chat-room/#", "messenger-notifications/+", "user/+/online", "$SYS/broker/uptime",
        "$share/g/chat-room/AbCdEfGhIjKlMnOpQrStUv", "$CONTROL/parley-auth/v1", "/chat-room/AbCdEfGhIjKlMnOpQrStUv",
        "chat-room/AbCdEfGhIjKlMnOpQrStUv/", "chat-room/AbCdEfGhIjKlMnOpQrStUv/x", "chat-room/short", "chat-room/",
        "chat-room//x", "other/topic", "", "chat-room/AbCdEfGhIjKlMnOpQrSt.v",
    ])
    func everythingElseIsDenied(topic: String) {
        for access in BrokerACL.Access.allCases { #expect(decide(topic, access) == .deny, "\(topic) \(access)") }
    }

    @Test func anUnknownIdentityGetsNothingAndTheServerEverything() {
        for access in BrokerACL.Access.allCases {
            #expect(decide("user/8/online", access, user: nil) == .deny)
            #expect(decide("$SYS/#", access, server: true) == .allow)
        }
    }
}
