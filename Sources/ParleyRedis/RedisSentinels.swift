/// Where the Redis primary is, as Redis Sentinel says (`SENTINEL get-master-addr-by-name`):
/// the first Sentinel that answers is believed; after a failover they name the promoted replica.
enum RedisSentinels {
    static func primary(of configuration: RedisConfiguration) async throws -> (host: String, port: Int) {
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
                    return (host, port)
                }
                failures.append("\(sentinel.host):\(sentinel.port) knows no \(configuration.masterName)")
            } catch {
                failures.append("\(sentinel.host):\(sentinel.port): \(error)")
            }
        }
        throw RedisError.connection("no Sentinel named the primary (\(failures.joined(separator: "; ")))")
    }
}
