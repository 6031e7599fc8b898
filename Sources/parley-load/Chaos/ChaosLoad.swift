import ArgumentParser
import Foundation
import ParleyCore
import ParleyMQTT
import Synchronization

/// `parley-load chaos`: the steady mixed load `deploy/chaos/run` injects faults into. Half the
/// messages go over MQTT `chat-in`, half over REST, in rooms of two and one large room, with
/// read markers, typing notices and a login every second; every acknowledgement and every
/// delivery is written down (``ChaosLog``) for the verifier to hold against the database.
///
/// A send is retried with its uid, as an app retries, until it is acknowledged: a REST
/// network error or 5xx, an MQTT publish without PUBACK, or a `message-rejected` with
/// `unavailable`. Nothing else is retried, so a message lost after its acknowledgement stays
/// lost and the verifier finds it.
struct ChaosLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos", abstract: "A steady mixed load with every send and delivery recorded (deploy/chaos/run).")

    @OptionGroup var target: TargetOptions
    @Option(help: "Directory for rooms.json, the JSON lines and summary.json.") var out: String
    @Option(help: "Messages per second, in all.") var rate = 100.0
    @Option(help: "Rooms of two.") var pairs = 10
    @Option(help: "Members of the one large room.") var groupSize = 50
    @Option(help: "Seconds to wait for outstanding deliveries after the stop.") var drain = 60
    @Option(help: "Reads per second (history and the room list, alternately), each recorded.") var readRate = 0.0

    func validate() throws {
        guard rate > 0, readRate >= 0, pairs >= 1, groupSize >= 3, drain >= 0 else {
            throw ValidationError("rate positive, read rate not negative, at least one pair, a group of three or more")
        }
    }

    func run() async throws {
        let tag = BenchUsers.newTag()
        let api = ParleyRESTClient(baseURL: target.api, caFile: target.caFile)
        print("chaos: \(pairs) rooms of 2 and one of \(groupSize); setting up \(pairs * 2 + groupSize) users...")
        // Reads are made by three users in a room of their own who never write during the load:
        // a user who wrote lately reads from the primary (read-your-writes), and the reads are
        // to show what a replica's failure does to its readers.
        let readerCount = readRate > 0 ? 3 : 0
        let users = try await BenchUsers.create(pairs * 2 + groupSize + readerCount, tag: tag, api: api)
        let pairUsers = Array(users.prefix(pairs * 2))
        let groupUsers = Array(users.dropFirst(pairs * 2).prefix(groupSize))
        let readerUsers = Array(users.suffix(readerCount))
        let readerRoom =
            readerCount > 0
            ? try await BenchRooms.create(users: readerUsers, members: readerCount, rooms: 1, tag: tag, api: api)[0].id
            : 0
        let pairRooms = try await BenchRooms.create(users: pairUsers, members: 2, rooms: pairs, tag: tag, api: api)
        let groupRoom = try await BenchRooms.create(
            users: groupUsers, members: groupSize, rooms: 1, tag: tag, api: api)
        var rooms = pairRooms.enumerated().map { index, room in
            ChaosRoom(id: room.id, uid: room.uid, members: Array(pairUsers[(index * 2)..<(index * 2 + 2)]))
        }
        rooms.append(ChaosRoom(id: groupRoom[0].id, uid: groupRoom[0].uid, members: groupUsers))
        try JSONSerialization.data(
            withJSONObject: rooms.map { ["id": $0.id, "uid": $0.uid, "members": $0.members.map(\.id)] }
        ).write(to: URL(fileURLWithPath: "\(out)/rooms.json"))

        let log = try ChaosLog(directory: out)
        let traffic = try await ChaosTraffic(
            rooms: rooms, users: pairUsers + groupUsers, readers: (readerUsers, readerRoom), tag: tag, api: api,
            target: target, log: log)
        FileManager.default.createFile(atPath: "\(out)/ready", contents: nil)
        print("chaos: sending \(rate) messages/s until \(out)/stop exists")
        await traffic.send(rate: rate, readRate: readRate) { FileManager.default.fileExists(atPath: "\(out)/stop") }
        print("chaos: stopped; waiting up to \(drain) s for outstanding deliveries")
        let missing = await traffic.drain(within: .seconds(drain))
        await traffic.shutdown()
        await api.shutdown()
        log.flush()
        let summary: [String: Int] = [
            "acknowledged": log.count("sent"), "attempts": traffic.attempts, "received": log.count("received"),
            "missing_deliveries": missing, "reads": log.count("reads"),
        ]
        try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
            .write(to: URL(fileURLWithPath: "\(out)/summary.json"))
        print("chaos: \(summary)")
    }
}

/// A room of the load, with its members (all writers).
struct ChaosRoom: Sendable {
    let id: Int64
    let uid: String
    let members: [BenchUser]
}
