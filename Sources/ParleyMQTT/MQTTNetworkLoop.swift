import CMosquitto
import Dispatch
import Foundation
import Glibc
import Logging
import ParleyRuntime
import Synchronization

/// libmosquitto's network input and output on a thread of Parley's own, waiting with poll(2).
///
/// libmosquitto's own loop (`mosquitto_loop_start`) waits with select(2), which cannot watch
/// a descriptor above 1023: in a process holding thousands of connections (`parley serve`
/// with its HTTP clients), a reconnect gets such a descriptor and that loop ends for good.
/// This one has no such limit. It connects, reconnects after a lost connection with
/// back-off (1 s, doubling to 5 s), and sends what other threads queued as soon as they
/// ``wake()`` it.
final class MQTTNetworkLoop: Sendable {
    /// The libmosquitto handle; with `mosquitto_threaded_set` its calls are thread-safe.
    nonisolated(unsafe) let handle: OpaquePointer
    let logger: Logger
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    /// Packets queued since the last write (publishes, and the PUBACKs of QoS 1 messages
    /// received), counted by the client: more than one is worth corking (``writeCorked(_:)``).
    private let queuedPackets = Atomic<Int>(0)
    /// Passes through the loop so far (for tests: each must cost the same, however many came before).
    let passes = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// The thread ended (``stop()`` saw it).
    private let hasEnded = Atomic<Bool>(false)
    /// False once ``stopReading()`` was called. Reads happen under this lock, so once
    /// ``stopReading()`` returns no read is under way and none begins: a read already past
    /// its check would otherwise take messages after their receiver stopped taking them, and
    /// libmosquitto would acknowledge them (the ingest lost one so, under load).
    private let readable = Mutex(true)

    init(handle: OpaquePointer, logger: Logger) throws {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            throw MQTTError(code: MOSQ_ERR_ERRNO.rawValue, message: "pipe failed: \(errno)")
        }
        for end in pipe {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        self.handle = handle
        self.logger = logger
        (wakeReader, wakeWriter) = (pipe[0], pipe[1])
    }

    deinit {
        close(wakeReader)
        close(wakeWriter)
    }

    /// Starts the thread, which connects to `host` (later connections reconnect there).
    /// - Parameter sessionExpiry: seconds the broker keeps the session; sent on every
    ///   connection, since libmosquitto's own reconnect would send none (the session would
    ///   end with the next disconnect).
    /// - Parameter mayRead: false while the client's inbox is full: the socket is left
    ///   unread (back-pressure to the broker) until ``wake()``.
    /// - Parameter mayWrite: false while queued packets must wait (``AcknowledgementGate``),
    ///   until ``wake()``. Asked after each read, on this thread: a PUBACK the read queued
    ///   goes out only if the message's receiver has settled it by then.
    func start(
        host: String, port: Int32, keepAlive: Int32, sessionExpiry: UInt32?,
        mayRead: @escaping @Sendable () -> Bool, mayWrite: @escaping @Sendable () -> Bool
    ) {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        Thread.start(named: "mosquitto loop") { [self] in
            if let sessionExpiry {
                var properties: OpaquePointer?
                mosquitto_property_add_int32(
                    &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpiry)
                run(reconnectWithConnect: true, gates: Gates(mayRead: mayRead, mayWrite: mayWrite)) {
                    mosquitto_connect_bind_v5(handle, host, port, keepAlive, nil, properties)
                }
                mosquitto_property_free_all(&properties)
            } else {
                run(reconnectWithConnect: false, gates: Gates(mayRead: mayRead, mayWrite: mayWrite)) {
                    mosquitto_connect(handle, host, port, keepAlive)
                }
            }
            finished.signal()
        }
    }

    /// Counts a packet queued for the next write.
    func queued() {
        queuedPackets.add(1, ordering: .relaxed)
    }

    /// Makes the loop look at once for packets queued by another thread.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Ends the loop after it flushed what is queued (a DISCONNECT); waits up to 5 s for it.
    /// - Returns: whether the thread has ended (or never started): only then may the handle go.
    @discardableResult
    func stop() -> Bool {
        if stopping.exchange(true, ordering: .sequentiallyConsistent) { return hasEnded.load(ordering: .acquiring) }
        guard started.load(ordering: .sequentiallyConsistent) else {
            hasEnded.store(true, ordering: .releasing)
            return true
        }
        wake()
        let ended = finished.wait(timeout: .now() + 5) == .success
        if ended { hasEnded.store(true, ordering: .releasing) }
        return ended
    }

    private var isStopping: Bool { stopping.load(ordering: .sequentiallyConsistent) }

    /// Reads nothing more from the socket, except to see it end; waits for a read under way.
    /// Brief: a read takes what the socket holds, at most 64 packets, and never waits.
    func stopReading() {
        readable.withLock { $0 = false }
        wake()
    }

    /// Whether the loop may read the socket and write what is queued now.
    ///
    /// Passed down, never kept in a `Mutex`: reading a closure out of a `Mutex<() -> Bool>`
    /// through `withLock { $0 }` writes it back wrapped in two more reabstraction thunks, so
    /// each poll called a longer chain (40,000 frames deep after a few minutes of the chaos
    /// run: the fan-out worker's loop crawled, then overflowed).
    private struct Gates {
        let mayRead: @Sendable () -> Bool
        let mayWrite: @Sendable () -> Bool
    }

    private func run(reconnectWithConnect: Bool, gates: Gates, connect: () -> Int32) {
        var everConnected = false
        var backoff = 1.0
        while !isStopping {
            if mosquitto_socket(handle) < 0 {
                let rc = everConnected && !reconnectWithConnect ? mosquitto_reconnect(handle) : connect()
                guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                    logger.warning("MQTT broker not reachable; retrying", metadata: ["code": "\(rc)"])
                    pause(seconds: backoff)
                    backoff = min(backoff * 2, 5)
                    continue
                }
                everConnected = true
                backoff = 1
            }
            serviceSocket(gates)
        }
        // A DISCONNECT queued by the shutdown goes out before the thread ends, unless writes
        // are held: then the socket just closes, and the broker keeps what was not acknowledged.
        for _ in 0..<10 where mosquitto_socket(handle) >= 0 && mosquitto_want_write(handle) && gates.mayWrite() {
            _ = mosquitto_loop_write(handle, 1)
        }
        if !gates.mayWrite(), mosquitto_socket(handle) >= 0 {
            // Ended now, as a crash would end it, not when the handle goes.
            Glibc.shutdown(mosquitto_socket(handle), Int32(SHUT_RDWR))
        }
    }

    /// One wait for the socket or a wake-up, then reading, writing and keep-alive. An error
    /// leaves the socket closed (libmosquitto reports the disconnect), to be reconnected.
    private func serviceSocket(_ gates: Gates) {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return }
        passes.add(1, ordering: .relaxed)
        let reading = readable.withLock { $0 } && gates.mayRead()
        let writing = mosquitto_want_write(handle) && gates.mayWrite()
        let events = (reading ? Int16(POLLIN) : 0) | (writing ? Int16(POLLOUT) : 0)
        var descriptors = [
            pollfd(fd: socket, events: events, revents: 0), pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0),
        ]
        guard poll(&descriptors, 2, 1000) >= 0 || errno == EINTR else { return }
        if descriptors[1].revents != 0 { drainWakeUps() }
        var rc = MOSQ_ERR_SUCCESS.rawValue
        // A hang-up or error is read even while paused or stopped: it ends the connection (what
        // is read with it is acknowledged on no connection, so the broker sends it again).
        let ended = descriptors[0].revents & Int16(POLLHUP | POLLERR) != 0
        if ended || descriptors[0].revents & Int16(POLLIN) != 0 {
            rc = readable.withLock { readable in
                readable || ended ? mosquitto_loop_read(handle, 64) : MOSQ_ERR_SUCCESS.rawValue
            }
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, mosquitto_socket(handle) >= 0, mosquitto_want_write(handle),
            gates.mayWrite()
        {
            rc =
                queuedPackets.exchange(0, ordering: .relaxed) > 1
                ? writeCorked(socket) : mosquitto_loop_write(handle, 64)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue {
            rc = mosquitto_loop_misc(handle)
        }
        if rc != MOSQ_ERR_SUCCESS.rawValue, !isStopping, mosquitto_socket(handle) < 0 {
            // Lost: a moment before reconnecting, so a broker that refuses at once is not spun on.
            pause(seconds: 0.2)
        }
    }

    /// Writes what is queued in as few segments as the socket allows. libmosquitto writes each
    /// packet with a write(2) of its own and the socket has `TCP_NODELAY`, so a batch of events
    /// and PUBACKs left as that many segments, each a pass through the network stack and a read
    /// for the broker; corked, the batch leaves in one when uncorked. A single packet is
    /// written without: corking it would only add two calls.
    private func writeCorked(_ socket: Int32) -> Int32 {
        var on: Int32 = 1
        var off: Int32 = 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
        let rc = mosquitto_loop_write(handle, 64)
        // A write that lost the connection closed the socket: its number may be another's now.
        if mosquitto_socket(handle) == socket {
            _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
        }
        return rc
    }

    private func drainWakeUps() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(wakeReader, &buffer, buffer.count) > 0 {}
    }

    /// Sleeps, unless a stop wakes it first.
    private func pause(seconds: Double) {
        var descriptor = pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(seconds)
        while !isStopping, Date() < deadline {
            _ = poll(&descriptor, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if descriptor.revents != 0 {
                drainWakeUps()
                descriptor.revents = 0
            }
        }
    }
}
