import Foundation
import Observation
import ParleyKit
import ParleyTestSupport
import Synchronization
import Testing

/// ParleyClient against the whole stack (serve, worker, PostgreSQL, Redis, mosquitto with
/// Parley's plugin), as an app uses it.
struct ParleyClientTests {
    static let unlimited = ["PARLEY_LIMIT_MESSAGES_PER_SECOND": "1000", "PARLEY_LIMIT_MESSAGES_BURST": "1000"]

    @Test(arguments: ParleyClientStack.Transport.allCases)
    func twoClientsChatBothWaysAHundredSendsResolveInOrderAndARefusalResolvesWithIt(
        over transport: ParleyClientStack.Transport
    ) async throws {
        try await ParleyClientStack.run(environment: Self.unlimited, transport: transport) { kit in
            let (alice, _) = try await kit.signedIn("alice")
            let (bob, bobID) = try await kit.signedIn("bob")
            let room = try await alice.directRoom(with: bobID)
            let aliceSees = Collected(await alice.messages(in: room.id))
            let bobSees = Collected(await bob.messages(in: room.id))
            // Bob's room list as a SwiftUI view reads it, told when it changes.
            let bobsList = await ParleyRoomList(client: bob)
            let redrawn = Mutex(false)
            await MainActor.run {
                withObservationTracking {
                    _ = bobsList.rooms
                } onChange: {
                    redrawn.withLock { $0 = true }
                }
            }
            try await bob.registerPushToken("bob-apns-token", provider: .apns)
            let bobsDevices = try await #require(await bob.rest).getV1Devices().ok.body.json.devices
            #expect(bobsDevices.map(\.hasPushToken) == [true])

            let hello = try await alice.send("Hello Bob", in: room.id).stored()
            // Bob's client learns of the room from its first message.
            #expect(await bobSees.waitForMessages(1).map(\.id) == [hello.id])
            #expect(await bob.room(room.id)?.unreadCount == 1)
            #expect(await bobsList.eventually { $0.room(room.id)?.unreadCount == 1 && $0.unreadCount == 1 })
            #expect(redrawn.withLock { $0 }, "the observable room list did not tell its change")
            try await bob.markRead(room.id, upTo: hello.seq)
            #expect(await bob.room(room.id)?.unreadCount == 0)
            #expect(await bobsList.eventually { $0.room(room.id)?.unreadCount == 0 && $0.unreadCount == 0 })
            #expect(await aliceSees.waitFor { $0 == .read(roomID: room.id, userID: bobID, seq: hello.seq) })
            let aliceID = try #require(await alice.userID)
            try await alice.setTyping(true, in: room.id)
            #expect(await bobSees.waitFor { $0 == .typing(roomID: room.id, userID: aliceID, creating: true) })
            let reply = try await bob.send("Hi Alice", in: room.id).stored()
            #expect(await aliceSees.waitForMessages(2).map(\.id) == [hello.id, reply.id])
            #expect(reply.senderID == bobID && reply.content == "Hi Alice")

            var outgoing: [ParleyOutgoingMessage] = []
            for index in 0..<100 { outgoing.append(try await alice.send("n\(index)", in: room.id)) }
            var stored: [ParleyMessage] = []
            for message in outgoing { stored.append(try await message.stored()) }
            #expect(stored.map(\.content) == (0..<100).map { "n\($0)" })
            #expect(stored.map(\.seq) == Array(reply.seq + 1...reply.seq + 100), "sends resolved out of order")
            let seen = await bobSees.waitForMessages(102)
            #expect(
                seen.map(\.id) == [hello.id, reply.id] + stored.map(\.id), "Bob saw a message twice or out of order")

            let seenProgress = Mutex<[ParleyUploadProgress]>([])
            let file = try await alice.upload(Data(repeating: 0x61, count: 200_000), name: "notes.txt") { progress in
                seenProgress.withLock { $0.append(progress) }
            }
            #expect(seenProgress.withLock { $0.map(\.sent) } == [65_536, 131_072, 196_608, 200_000])
            let attached = try await alice.send("see attached", in: room.id, attachments: [file.id]).stored()
            #expect(attached.attachmentIDs == [file.id])
            #expect(await bobSees.waitForMessages(103).last?.attachmentIDs == [file.id])

            let bobREST = try #require(await bob.rest)
            _ = try await bobREST.putV1MeBlocksUserId(path: .init(userId: try #require(await alice.userID)))
            let refused = try await alice.send("after the block", in: room.id)
            do {
                _ = try await refused.stored()
                Issue.record("a message to the user who blocked the sender was stored")
            } catch let rejection as ParleyRejection {
                #expect(rejection.code == "blocked" && rejection.uid == refused.uid)
            }
            await alice.signOut()
            await bob.signOut()
            #expect(await bobsList.eventually { $0.rooms.isEmpty }, "signed out, the list is empty")
        }
    }

    /// The broker goes away in the middle of a conversation and the access tokens expire
    /// meanwhile: sends go over REST (renewing the token after the server refuses it), the
    /// clients reconnect and fetch what they missed, and each shows every message once, in order;
    /// an edit made meanwhile is told, and only the room the light sync names is asked for its
    /// changes.
    @Test(arguments: ParleyClientStack.Transport.allCases)
    func aBrokerRestartAndAnExpiredAccessTokenLoseNothingAndShowNothingTwice(
        over transport: ParleyClientStack.Transport
    ) async throws {
        let environment = Self.unlimited.merging(["PARLEY_ACCESS_TOKEN_LIFETIME": "3"]) { $1 }
        try await ParleyClientStack.run(environment: environment, transport: transport) { kit in
            let (alice, _) = try await kit.signedIn("alice", renewBefore: .zero)
            let bobsRequests = RequestLog()
            let (bob, bobID) = try await kit.signedIn("bob", renewBefore: .zero, log: bobsRequests)
            // A room of Bob's where nothing changes (older than the catch-up's 5 s margin).
            let quiet = try await bob.directRoom(with: try await kit.registered("carol").id)
            try await Task.sleep(for: .seconds(6))
            // Bob's client learns of the new room after its first messages are stored: what
            // came since it first heard of the room is told, not taken for history.
            bobsRequests.roomListDelay.withLock { $0 = .seconds(2) }
            let room = try await alice.directRoom(with: bobID)
            let aliceSees = Collected(await alice.messages(in: room.id))
            let bobSees = Collected(await bob.messages(in: room.id))
            var sent: [ParleyMessage] = []
            for index in 0..<5 { sent.append(try await alice.send("before \(index)", in: room.id).stored()) }
            #expect(
                await bobSees.waitForMessages(5).map(\.id) == sent.map(\.id),
                "Bob saw seqs \(bobSees.messages.map(\.seq)) of \(sent.map(\.seq)); requests \(bobsRequests.all)")
            bobsRequests.roomListDelay.withLock { $0 = .zero }

            try await kit.services.stop("mosquitto")
            try await Task.sleep(for: .seconds(4))  // every access token has expired
            for index in 0..<5 { sent.append(try await alice.send("while away \(index)", in: room.id).stored()) }
            let aliceREST = try #require(await alice.rest)
            _ = try await aliceREST.patchV1RoomsIdMessagesMessageId(
                path: .init(id: room.id, messageId: sent[0].id), body: .json(.init(content: "before 0, edited"))
            ).ok
            try await kit.services.start("mosquitto")
            for index in 0..<5 { sent.append(try await bob.send("after \(index)", in: room.id).stored()) }

            let expected = sent.map(\.id)
            #expect(Set(expected).count == 15)
            #expect(await bobSees.waitForMessages(15, timeout: .seconds(40)).map(\.id) == expected)
            #expect(await aliceSees.waitForMessages(15, timeout: .seconds(40)).map(\.id) == expected)
            try await Task.sleep(for: .seconds(1))
            #expect(bobSees.messages.count == 15 && aliceSees.messages.count == 15, "a message was shown twice")
            #expect(
                await bobSees.waitFor {
                    if case .edited(let message) = $0 {
                        message.id == sent[0].id && message.content == "before 0, edited"
                    } else {
                        false
                    }
                }, "the edit made while Bob was away was not told")
            let changesAsked = bobsRequests.all.filter { $0.contains("changedSince") }
            #expect(bobsRequests.all.contains { $0.hasPrefix("/v1/rooms?") && $0.contains("since=") })
            #expect(changesAsked.contains { $0.hasPrefix("/v1/rooms/\(room.id)/messages") })
            #expect(
                !changesAsked.contains { $0.hasPrefix("/v1/rooms/\(quiet.id)/") },
                "a room with no change was asked for its changes: \(changesAsked)")
            await alice.signOut()
            await bob.signOut()
        }
    }

    /// `parley-chat`, the terminal chat on ParleyKit: it shows the history and sends what is
    /// typed (piped here), saying when it is stored.
    @Test func theTerminalChatShowsTheHistoryAndSendsWhatIsTyped() async throws {
        try await ParleyClientStack.run { kit in
            let (bob, bobID) = try await kit.signedIn("bob")
            let alice = try await kit.registered("alice")
            let room = try await bob.directRoom(with: alice.id)
            _ = try await bob.send("hi from bob", in: room.id).stored()
            let bobSees = Collected(await bob.messages(in: room.id))
            let chat = URL(fileURLWithPath: try ParleyCommand.binary).deletingLastPathComponent()
                .appendingPathComponent("parley-chat").path
            let result = try await Subprocess.run(
                chat,
                [
                    "--server", kit.stack.base, "--broker", "mqtt://127.0.0.1:\(kit.services.port("MQTT"))", "--email",
                    alice.email,
                ],
                input: "/dm \(bobID)\n/history\nhello from the terminal\n",
                environment: ["PARLEY_CHAT_PASSWORD": ParleyClientStack.password], timeLimit: .seconds(60))
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("#1 user \(bobID): hi from bob"), "\(result.standardOutput)")
            #expect(result.standardOutput.contains("✓ stored #2 in room \(room.id)"), "\(result.standardOutput)")
            #expect(await bobSees.waitForMessages(1).map(\.content) == ["hello from the terminal"])
            await bob.signOut()
        }
    }

    /// Sign-in with the app's identity provider: the token exchange's session connects as a
    /// password's does; a forged token is refused with the contract's code; signing out ends it.
    @Test func anIssuersTokenSignsInAForgedOneIsRefusedAndSigningOutEndsTheSession() async throws {
        let key = try TestIssuer.Key.rsa("k1")
        let issuer = try await TestIssuer.start([key])
        let issuers = TestScratch.path("issuers", suffix: ".json")
        try Data("[\(issuer.entry(algorithms: ["RS256"]))]".utf8).write(to: URL(fileURLWithPath: issuers))
        let environment = [
            "PARLEY_AUTH_ISSUERS_FILE": issuers, "PARLEY_AUTH_CA_FILE": try issuer.authority.writeCertificate(),
            "PARLEY_OUTBOUND_ALLOW": "127.0.0.0/8, ::1/128",
        ]
        do {
            try await ParleyClientStack.run(environment: environment) { kit in
                let (bob, bobID) = try await kit.signedIn("bob")
                let parley = kit.client()
                let token = try issuer.token(key, subject: "app-user-53", claims: ["email": #""kit@example.com""#])
                try await parley.signIn(token: token)
                let me = try #require(await parley.userID)
                let room = try await parley.directRoom(with: bobID)
                let bobSees = Collected(await bob.messages(in: room.id))
                _ = try await parley.send("signed in with the app's token", in: room.id).stored()
                #expect(await bobSees.waitForMessages(1).map(\.senderID) == [me])

                let stranger = kit.client()
                do {
                    try await stranger.signIn(token: "a.b.c")
                    Issue.record("a forged token signed in")
                } catch {
                    #expect(ParleyProblem.of(error)?.code == "invalid-token", "\(error)")
                }
                await parley.signOut()
                #expect(await parley.userID == nil)
                await #expect(throws: ParleyClientError.signedOut) { try await parley.send("after", in: room.id) }
                await bob.signOut()
            }
        } catch {
            await issuer.stop()
            throw error
        }
        await issuer.stop()
    }
}

@MainActor
extension ParleyRoomList {
    /// Waits up to `timeout` for the list to satisfy `holds`; whether it did.
    func eventually(timeout: Duration = .seconds(20), _ holds: @MainActor (ParleyRoomList) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !holds(self), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        return holds(self)
    }
}
