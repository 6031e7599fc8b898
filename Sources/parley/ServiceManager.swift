import Foundation
import Glibc
import ServiceLifecycle
import Synchronization

/// Tells systemd (`Type=notify`) when the process is ready, that it is alive (`WatchdogSec`)
/// and that it is stopping: the `sd_notify` protocol, one datagram to `$NOTIFY_SOCKET`.
///
/// Without `NOTIFY_SOCKET` (not started by systemd) it does nothing. A send is one
/// non-blocking `sendto` of a few bytes, so it may run on any thread.
enum ServiceManager {
    /// Sends `state` (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`); false when not
    /// under systemd or the send failed.
    @discardableResult
    static func notify(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard var path = environment["NOTIFY_SOCKET"], !path.isEmpty,
            path.hasPrefix("/") || path.hasPrefix("@")
        else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // An abstract socket's name starts with a NUL where the environment has `@`.
        let abstract = path.hasPrefix("@")
        if abstract { path.removeFirst() }
        let name = (abstract ? [0] : []) + Array(path.utf8)
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in name.enumerated() { bytes[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (abstract ? 0 : 1))
        let sent = state.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, text.baseAddress, text.count - 1, Int32(MSG_DONTWAIT), $0, length)
                }
            }
        }
        return sent == state.utf8.count
    }

    /// How often systemd wants `WATCHDOG=1` (half its `WatchdogSec`, as sd_watchdog_enabled
    /// advises); nil when it wants none, or asks another process of the unit.
    static func watchdogInterval(environment: [String: String] = ProcessInfo.processInfo.environment) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else {
            return nil
        }
        if let pid = environment["WATCHDOG_PID"].flatMap(Int32.init), pid != getpid() { return nil }
        return .microseconds(microseconds / 2)
    }
}

/// Readiness once every listener is bound, watchdog pings while the process runs, and
/// `STOPPING=1` when it begins to drain.
///
/// The pings come from a task of Swift concurrency's pool: a process whose threads are all
/// blocked stops pinging, and systemd restarts it, which is the liveness that matters here.
final class ServiceManagerNotifier: Service, Sendable {
    private let state = Mutex((bound: 0, expected: Int?.none, told: false))

    init() {}

    /// How many ``listenerBound()`` calls mean ready; set before the listeners run.
    func expect(listeners: Int) {
        let ready = state.withLock { state -> Bool in
            state.expected = listeners
            guard state.bound >= listeners, !state.told else { return false }
            state.told = true
            return true
        }
        // No listener to wait for (a worker without its internal port): ready now.
        if ready { ServiceManager.notify("READY=1") }
    }

    /// Counts a bound listener; the last one sends `READY=1`.
    func listenerBound() {
        let ready = state.withLock { state -> Bool in
            state.bound += 1
            guard state.bound == state.expected, !state.told else { return false }
            state.told = true
            return true
        }
        if ready { ServiceManager.notify("READY=1") }
    }

    func run() async throws {
        if let interval = ServiceManager.watchdogInterval() {
            try? await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    ServiceManager.notify("WATCHDOG=1")
                    try await Task.sleep(for: interval)
                }
            }
        } else {
            try? await gracefulShutdown()
        }
        ServiceManager.notify("STOPPING=1")
    }
}
