import Foundation

/// A logged-in benchmark user: REST token and MQTT credentials.
struct BenchUser: Sendable {
    let index: Int
    let login: API.Login

    var id: Int64 { login.user.id }
}

/// Registers and logs in benchmark users through the public API, as their apps would.
///
/// The server runs with a low bcrypt cost and open rate limits for this (`deploy/bench/run`
/// sets both): password hashing is not what these benchmarks measure.
enum BenchUsers {
    /// - Parameter pushToken: a device token per user (APNs), so fan-out queues pushes.
    static func create(
        _ count: Int, tag: String, api: ParleyRESTClient, withPushTokens: Bool = false, concurrency: Int = 16
    ) async throws -> [BenchUser] {
        try await withThrowingTaskGroup(of: BenchUser.self) { group in
            var users: [BenchUser] = []
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask { try await one(index, tag: tag, api: api, withPushToken: withPushTokens) }
            }
            while next < min(count, concurrency) { add() }
            while let user = try await group.next() {
                users.append(user)
                if next < count { add() }
            }
            return users.sorted { $0.index < $1.index }
        }
    }

    private static func one(_ index: Int, tag: String, api: ParleyRESTClient, withPushToken: Bool) async throws
        -> BenchUser
    {
        let (email, password) = credentials(index, tag: tag)
        _ = try await api.call(
            .POST, "/v1/auth/register",
            json: ["email": email, "password": password, "firstName": "Load", "lastName": "User \(index)"],
            expected: [201], as: API.User.self)
        var device: [String: Any] = ["platform": withPushToken ? "ios" : "other", "name": "parley-load"]
        if withPushToken {
            // 64 hex digits, unique per run and user.
            device["pushToken"] = tag.utf8.map { String(format: "%02x", $0) }.joined() + String(format: "%048x", index)
            device["pushProvider"] = "apns"
        }
        let login = try await api.call(
            .POST, "/v1/auth/login", json: ["email": email, "password": password, "device": device],
            expected: [200], as: API.Login.self)
        return BenchUser(index: index, login: login)
    }

    /// The e-mail and password of user `index` of a run.
    static func credentials(_ index: Int, tag: String) -> (email: String, password: String) {
        ("load-\(tag)-\(index)@bench.parley.test", "bench-password-\(index)")
    }

    /// A short random tag, so runs on the same data never collide.
    static func newTag() -> String {
        String((0..<8).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
    }
}
