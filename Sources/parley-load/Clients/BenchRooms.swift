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
}
