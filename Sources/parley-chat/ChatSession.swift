import Foundation
import ParleyKit

/// What the terminal shows and does: every room's events as they come, commands, and sends
/// to the current room that say when they are stored or refused.
actor ChatSession {
    let parley: ParleyClient
    let me: Int
    private var current: Int?
    /// Sends not yet stored or refused: the chat waits for them before it ends.
    private var sending: [Task<Void, Never>] = []

    init(parley: ParleyClient, me: Int) {
        self.parley = parley
        self.me = me
    }

    func run(lines: AsyncStream<String>) async {
        Terminal.say("Signed in as user \(me). /rooms, /room ID, /dm USER-ID, /history, /quit")
        await listRooms()
        current = await parley.roomList.first?.id
        let events = Task { [parley] in
            for await event in await parley.allEvents() { Terminal.say(Self.describe(event)) }
        }
        for await line in lines {
            guard await handle(line.trimmingCharacters(in: .whitespaces)) else { break }
        }
        // Piped input ends at once: what it sent is told before the chat ends.
        for send in sending { await send.value }
        events.cancel()
    }

    /// Handles one line; false to quit.
    private func handle(_ line: String) async -> Bool {
        let words = line.split(separator: " ", maxSplits: 1).map(String.init)
        do {
            switch words.first {
            case nil: break
            case "/quit": return false
            case "/rooms": await listRooms()
            case "/room":
                guard let id = words.dropFirst().first.flatMap({ Int($0) }), await parley.room(id) != nil else {
                    Terminal.say("no such room: /rooms lists yours")
                    return true
                }
                current = id
                Terminal.say("now in room \(id)")
            case "/dm":
                guard let user = words.dropFirst().first.flatMap({ Int($0) }) else {
                    Terminal.say("/dm USER-ID")
                    return true
                }
                let room = try await parley.directRoom(with: user)
                current = room.id
                Terminal.say("now in room \(room.id), with user \(user)")
            case "/history":
                guard let current else { return true }
                for message in try await parley.history(in: current, limit: 20) {
                    Terminal.say(Self.describe(.new(message)))
                }
            default:
                guard let current else {
                    Terminal.say("no room yet: /dm USER-ID")
                    return true
                }
                let outgoing = try await parley.send(line, in: current)
                sending.append(
                    Task {
                        do {
                            let stored = try await outgoing.stored()
                            Terminal.say("✓ stored #\(stored.seq) in room \(stored.roomID)")
                        } catch {
                            Terminal.say("✗ not stored: \(error)")
                        }
                    })
            }
        } catch {
            Terminal.say("✗ \(error)")
        }
        return true
    }

    private func listRooms() async {
        let rooms = await parley.roomList
        if rooms.isEmpty { Terminal.say("no rooms yet: /dm USER-ID starts one") }
        for room in rooms {
            let name = room.name ?? room.peerID.map { "with user \($0)" } ?? "room"
            Terminal.say("room \(room.id) \(name): \(room.unreadCount) unread")
        }
    }

    static func describe(_ event: ParleyEvent) -> String {
        switch event {
        case .new(let message):
            "[room \(message.roomID)] #\(message.seq) user \(message.senderID.map(String.init) ?? "-"): \(message.content)"
        case .edited(let message): "[room \(message.roomID)] #\(message.seq) edited: \(message.content)"
        case .deleted(_, let seq, let roomID, _): "[room \(roomID)] #\(seq) deleted"
        case .reaction(_, let roomID, let key, let userID, let added, _):
            "[room \(roomID)] user \(userID) \(added ? "reacted" : "took back") \(key)"
        case .read(let roomID, let userID, let seq): "[room \(roomID)] user \(userID) read up to #\(seq)"
        case .typing(let roomID, let userID, let creating):
            "[room \(roomID)] user \(userID) \(creating ? "is typing" : "stopped typing")"
        case .roomChanged(let roomID, let change): "[room \(roomID)] \(change)"
        case .rejected(let rejection): "✗ refused (\(rejection.code)): \(rejection.reason)"
        }
    }
}
