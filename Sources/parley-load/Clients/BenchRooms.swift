import Foundation

/// The benchmark's rooms, created through the public API by their first member.
enum BenchRooms {
    /// Rooms of two are direct rooms; larger ones are created with their members.
    static func create(users: [BenchUser], members: Int, rooms: Int, tag: String, api: ParleyRESTClient)
        async throws -> [API.Room]
    {
        try await withThrowingTaskGroup(of: (Int, API.Room).self) { group in
            for room in 0..<rooms {
                let owner = users[room * members]
                let others = users[(room * members + 1)..<((room + 1) * members)]
                group.addTask {
                    if members == 2 {
                        return (
                            room,
                            try await api.call(
                                .PUT, "/v1/rooms/direct/\(others.first!.id)", token: owner.login.accessToken,
                                json: [:], as: API.Room.self)
                        )
                    }
                    let body: [String: Any] = [
                        "name": "Load \(tag) \(room)",
                        "members": others.map { ["userId": $0.id, "role": "writer"] },
                        "firstMessage": ["content": "Welcome", "uid": "welcome-\(tag)-\(room)"],
                    ]
                    return (
                        room,
                        try await api.call(
                            .POST, "/v1/rooms", token: owner.login.accessToken, json: body, as: API.Room.self)
                    )
                }
            }
            var result: [Int: API.Room] = [:]
            for try await (index, room) in group { result[index] = room }
            return (0..<rooms).map { result[$0]! }
        }
    }

    /// A two-party room, with one message, between each user and each of the `reach` users
    /// after it on a ring: every user is in `2 × reach` such rooms (with `reach` below half the
    /// users), its room list as long as a person's. A pair that already has its room keeps it.
    static func ring(users: [BenchUser], reach: Int, tag: String, api: ParleyRESTClient) async throws {
        let pairs = users.indices.flatMap { index in (1...reach).map { (index, (index + $0) % users.count) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (number, (first, second)) in pairs.enumerated() {
                // A bounded number in flight: the setup is not the measurement.
                if number >= 16 { try await group.next() }
                let owner = users[first]
                let peer = users[second]
                group.addTask {
                    let room = try await api.call(
                        .PUT, "/v1/rooms/direct/\(peer.id)", token: owner.login.accessToken, json: [:],
                        as: API.Room.self)
                    _ = try await api.call(
                        .POST, "/v1/rooms/\(room.id)/messages", token: owner.login.accessToken,
                        json: ["content": "Hello from the ring", "uid": "ring-\(tag)-\(first)-\(second)"],
                        as: API.Identified.self)
                }
            }
            try await group.waitForAll()
        }
    }
}
