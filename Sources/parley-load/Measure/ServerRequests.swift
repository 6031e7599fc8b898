import Foundation
import Glibc
import ParleyCore
import ParleyRuntime

/// Requests each server received, counted as the data segments that arrived on its listening
/// port (`ss -ti`, `data_segs_in` of every established connection): per message, about how
/// many round trips the pipeline made to PostgreSQL, Redis and the broker. On loopback a
/// request of up to 64 KiB is one segment, and a pipelined batch of requests written at once
/// is one too, which is what a round trip means here. Connections are followed one by one, so
/// a connection a pool closes during a step takes only its own last count with it (its
/// segments since the step's first sample are missed) instead of making the sum go back.
struct ServerRequests: Sendable {
    /// Name → listening port.
    let ports: [(name: String, port: Int)]
    /// Per named server, each open connection's segments received so far, by its peer address.
    typealias Sample = [String: [String: Double]]

    init(count: [String]) throws {
        ports = try count.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let port = Int(parts[1]), (1...65535).contains(port) else {
                throw LoadError("--count-requests takes NAME=PORT, not \(entry)")
            }
            return (String(parts[0]), port)
        }
    }

    /// Segments received so far on each named port's open connections.
    func sample() async -> Sample {
        guard !ports.isEmpty else { return [:] }
        // `ss` waits for its child's output: on a thread of its own, not Swift concurrency's.
        let text = await BlockingCall.run("parley-load-ss") { Self.socketStatistics() }
        return Self.segmentsIn(text, ports: ports)
    }

    /// Segments each server received between two samples: what each connection open in both
    /// received meanwhile, and all that a connection opened meanwhile received.
    static func received(from start: Sample, to end: Sample) -> [String: Double] {
        end.reduce(into: [:]) { received, server in
            received[server.key] = server.value.reduce(0) { total, connection in
                let before = start[server.key]?[connection.key] ?? 0
                // Fewer than before: the peer's port was reused by a new connection.
                return total + (connection.value >= before ? connection.value - before : connection.value)
            }
        }
    }

    /// `data_segs_in` per connection (by peer address) of each named local port, from
    /// `ss -tinH` output (a socket's line, then its indented details).
    static func segmentsIn(_ text: String, ports: [(name: String, port: Int)]) -> Sample {
        var byPort: [Int: [String: Double]] = [:]
        var socket: (port: Int, peer: String)?
        for line in text.split(separator: "\n") {
            if !line.hasPrefix(" ") && !line.hasPrefix("\t") {
                // "Recv-Q Send-Q Local:Port Peer:Port": the local address is the third field.
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                socket =
                    fields.count >= 4
                    ? fields[2].split(separator: ":").last.flatMap { Int($0) }.map { ($0, String(fields[3])) } : nil
                continue
            }
            guard let current = socket,
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("data_segs_in:") }),
                let count = Double(field.dropFirst("data_segs_in:".count))
            else { continue }
            byPort[current.port, default: [:]][current.peer, default: 0] += count
        }
        return ports.reduce(into: [:]) { result, entry in result[entry.name] = byPort[entry.port] ?? [:] }
    }

    /// `ss`'s output, through posix_spawn: Foundation's `Process.run` crashed in `memcpy` in
    /// a generator holding 2,000 MQTT clients, each with a thread of its own.
    private static func socketStatistics() -> String {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else { return "" }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(pipe[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = ["/usr/bin/ss", "-tinH", "state", "established"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(pipe[1])
        guard spawned == 0 else { return "" }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count > 0 {
                output += buffer[0..<count]
            } else if count < 0, errno == EINTR {
                continue
            } else {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}
