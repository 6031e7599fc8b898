import Foundation

extension Thread {
    /// The most of a thread's name Linux keeps (`comm`, 16 bytes with its terminator).
    public static let nameLimit = 15

    /// Starts a thread that runs `body` under `name`, the name `top`, `perf`, `strace -f` and
    /// `/proc/PID/task/*/comm` show it by.
    ///
    /// On Linux, Foundation applies a `name` set before `start()` to nothing, and the kernel
    /// refuses a name longer than ``nameLimit`` bytes: such threads showed the name of the
    /// event loop that started them, and a profile by thread counted their samples there. So
    /// the thread names itself first, cut to the limit.
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let kept = String(decoding: name.utf8.prefix(nameLimit), as: UTF8.self)
        Thread {
            Thread.current.name = kept
            body()
        }.start()
    }
}
