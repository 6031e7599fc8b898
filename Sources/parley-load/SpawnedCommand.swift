import Glibc
import ParleyCore

/// A command run to its end, its standard output read, through `posix_spawn`: Foundation's
/// `Process.run` crashed in `memcpy` in a generator holding 2,000 MQTT clients, each with a
/// thread of its own. The wait runs on a thread of its own, not Swift concurrency's.
enum SpawnedCommand {
    struct Outcome: Sendable {
        /// The exit status (`-1` when it could not start or ended on a signal).
        var status: Int32
        var output: String
    }

    /// Its standard error goes to `/dev/null`.
    static func run(_ arguments: [String], name: String = "parley-load-command") async -> Outcome {
        await BlockingCall.run(name) { runWaiting(arguments) }
    }

    private static func runWaiting(_ arguments: [String]) -> Outcome {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else { return Outcome(status: -1, output: "") }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(pipe[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(pipe[1])
        guard spawned == 0 else { return Outcome(status: -1, output: "") }
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
        // -1 (not an exit) unless waitpid fills it in.
        var status: Int32 = -1
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // Exited normally: the low 7 bits are 0 and the status is the next byte.
        let exited = status & 0x7f == 0
        return Outcome(status: exited ? (status >> 8) & 0xff : -1, output: String(decoding: output, as: UTF8.self))
    }
}
