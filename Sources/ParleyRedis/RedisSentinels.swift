/// Where the Redis primary is, as Redis Sentinel says (`SENTINEL get-master-addr-by-name`):
/// each Sentinel in turn, until one names a server that `connect` finds to be the primary (a
/// Sentinel that missed a failover names the old one); after a failover they name the
/// promoted replica.
enum RedisSentinels {
    static func connectToPrimary(
        of configuration: RedisConfiguration,
        _ connect: ((host: String, port: Int)) async throws -> RedisConnection
    ) async throws -> RedisConnection {
        var failures: [String] = []
        for sentinel in configuration.sentinels {
            var direct = configuration
            (direct.host, direct.port) = sentinel
            direct.password = configuration.sentinelPassword
            direct.database = 0
            direct.sentinels = []
            do {
                let connection = try await RedisConnection.open(direct)
                defer { connection.discard() }
                let reply = try await connection.send(["SENTINEL", "get-master-addr-by-name", configuration.masterName])
                if let address = reply.array, address.count == 2, let host = address[0].string,
                    let port = address[1].string.flatMap(Int.init)
                {
                    return try await connect((host, port))
                }
                failures.append("\(sentinel.host):\(sentinel.port) knows no \(configuration.masterName)")
            } catch {
                failures.append("\(sentinel.host):\(sentinel.port): \(error)")
            }
        }
        throw RedisError.connection("no Sentinel named a reachable primary (\(failures.joined(separator: "; ")))")
    }
}
