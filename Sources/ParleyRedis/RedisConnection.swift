import CHiredis
import Dispatch
import Glibc

/// One hiredis connection.
///
/// hiredis is blocking, so every call runs on the connection's own serial queue, never on
/// an event loop or the caller's executor; the queue also serialises use of the context.
public final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    private let queue: DispatchQueue
    /// Set when an I/O error made the context unusable, or a caller left it in an unknown
    /// state (an interrupted `MULTI`); such a connection is discarded.
    public private(set) var isBroken = false

    /// Marks the connection for disposal instead of reuse.
    func discard() { queue.async { self.isBroken = true } }

    private init(context: UnsafeMutablePointer<redisContext>, queue: DispatchQueue) {
        self.context = context
        self.queue = queue
    }

    deinit { redisFree(context) }

    /// Connects, authenticates and selects the database.
    ///
    /// - Parameter blocking: no read timeout (a subscriber waits for messages indefinitely and
    ///   is stopped with ``interrupt()``).
    static func connect(_ configuration: RedisConfiguration, blocking: Bool = false) async throws -> RedisConnection {
        guard !configuration.sentinels.isEmpty else { return try await open(configuration, blocking: blocking) }
        return try await RedisSentinels.connectToPrimary(of: configuration) { address in
            var primary = configuration
            (primary.host, primary.port) = address
            primary.sentinels = []
            let connection = try await open(primary, blocking: blocking)
            // A Sentinel may not know of a failover yet: only the primary itself is taken.
            guard (try await connection.send(["ROLE"])).array?.first?.string == "master" else {
                connection.discard()
                throw RedisError.connection("\(address.host):\(address.port) is not the primary")
            }
            return connection
        }
    }

    static func open(_ configuration: RedisConfiguration, blocking: Bool = false) async throws -> RedisConnection {
        let queue = DispatchQueue(label: "parley.redis.connection")
        let connection: RedisConnection = try await onQueue(queue) {
            guard
                let context = redisConnectWithTimeout(
                    configuration.host, Int32(configuration.port),
                    timeval(configuration.connectTimeout))
            else { throw RedisError.connection("out of memory") }
            if context.pointee.err != 0 {
                let reason = errorString(context)
                redisFree(context)
                throw RedisError.connection(reason)
            }
            redisSetTimeout(context, timeval(blocking ? .zero : configuration.commandTimeout))
            redisEnableKeepAlive(context)
            return RedisConnection(context: context, queue: queue)
        }
        if let password = configuration.password {
            _ = try await connection.send(["AUTH", password])
        }
        if configuration.database != 0 {
            _ = try await connection.send(["SELECT", String(configuration.database)])
        }
        return connection
    }

    /// Sends one command and waits for its reply.
    public func send(_ arguments: [String]) async throws -> RedisValue {
        try await send(bytes: arguments.map { Array($0.utf8) })
    }

    /// Sends one command whose arguments may be binary.
    public func send(bytes arguments: [[UInt8]]) async throws -> RedisValue {
        try await Self.onQueue(queue) { try self.execute(arguments) }
    }

    /// Sends several commands in one write and reads their replies in order (pipelining: one
    /// round trip instead of one per command). An error reply of one command is its result.
    public func pipeline(_ commands: [[String]]) async throws -> [Result<RedisValue, RedisError>] {
        try await Self.onQueue(queue) { try self.executePipeline(commands.map { $0.map { Array($0.utf8) } }) }
    }

    /// Waits for the next reply the server pushes (a subscription's messages).
    func nextReply() async throws -> RedisValue {
        try await Self.onQueue(queue) {
            guard !self.isBroken else { throw RedisError.connection("connection is broken") }
            var raw: UnsafeMutableRawPointer? = nil
            guard redisGetReply(self.context, &raw) == REDIS_OK,
                let reply = raw?.assumingMemoryBound(to: redisReply.self)
            else {
                self.isBroken = true
                throw RedisError.connection(Self.errorString(self.context))
            }
            defer { freeReplyObject(raw) }
            return try Self.value(of: reply)
        }
    }

    /// Unblocks a call waiting on the socket (from any thread); the connection is then broken.
    func interrupt() {
        _ = Glibc.shutdown(context.pointee.fd, Int32(SHUT_RDWR))
    }

    private func execute(_ arguments: [[UInt8]]) throws -> RedisValue {
        guard !isBroken else { throw RedisError.connection("connection is broken") }
        let raw = Self.withArgv(arguments) { count, pointers, lengths in
            redisCommandArgv(context, count, pointers, lengths)
        }
        guard let reply = raw?.assumingMemoryBound(to: redisReply.self) else {
            isBroken = true
            throw RedisError.connection(Self.errorString(context))
        }
        defer { freeReplyObject(raw) }
        return try demoted { try Self.value(of: reply) }
    }

    /// A primary demoted by a failover answers writes with `READONLY`: the connection is of no
    /// more use, and the failure is an outage to retry (on a new connection, to the new primary).
    private func demoted<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch RedisError.server(let message) where message.hasPrefix("READONLY") {
            isBroken = true
            throw RedisError.connection("the server became a replica: \(message)")
        }
    }

    private func executePipeline(_ commands: [[[UInt8]]]) throws -> [Result<RedisValue, RedisError>] {
        guard !isBroken else { throw RedisError.connection("connection is broken") }
        for arguments in commands {
            let appended = Self.withArgv(arguments) { count, pointers, lengths in
                redisAppendCommandArgv(context, count, pointers, lengths)
            }
            guard appended == REDIS_OK else {
                isBroken = true
                throw RedisError.connection(Self.errorString(context))
            }
        }
        return try commands.map { _ in
            var raw: UnsafeMutableRawPointer? = nil
            guard redisGetReply(context, &raw) == REDIS_OK, let reply = raw?.assumingMemoryBound(to: redisReply.self)
            else {
                // Replies still owed would be read as answers to later commands.
                isBroken = true
                throw RedisError.connection(Self.errorString(context))
            }
            defer { freeReplyObject(raw) }
            return Result { try demoted { try Self.value(of: reply) } }.mapError {
                $0 as? RedisError ?? .connection("\($0)")
            }
        }
    }

    /// hiredis's argv form: C copies of the arguments with their lengths (binary-safe).
    private static func withArgv<T>(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafeMutablePointer<Int>) -> T
    ) -> T {
        let copies = arguments.map { argument -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(argument.count, 1))
            argument.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { copy.update(from: $0.baseAddress!, count: argument.count) }
            }
            return copy
        }
        defer { for copy in copies { copy.deallocate() } }
        var pointers = copies.map { UnsafePointer<CChar>?($0) }
        var lengths = arguments.map(\.count)
        return body(Int32(arguments.count), &pointers, &lengths)
    }

    private static func value(of reply: UnsafeMutablePointer<redisReply>) throws -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_INTEGER: return .integer(Int64(r.integer))
        case REDIS_REPLY_STATUS: return .status(text(r))
        case REDIS_REPLY_ERROR: throw RedisError.server(text(r))
        case REDIS_REPLY_STRING:
            return .bulk(Array(UnsafeRawBufferPointer(start: r.str, count: r.len)))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisValue] = []
            elements.reserveCapacity(r.elements)
            for index in 0..<r.elements {
                guard let element = r.element[index] else {
                    elements.append(.null)
                    continue
                }
                // An error inside an array (EXEC) is reported as that element's failure.
                elements.append(try value(of: element))
            }
            return .array(elements)
        default:
            throw RedisError.connection("unexpected reply type \(r.type)")
        }
    }

    private static func text(_ reply: redisReply) -> String {
        String(decoding: UnsafeRawBufferPointer(start: reply.str, count: reply.len), as: UTF8.self)
    }

    private static func errorString(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    private static func onQueue<T: Sendable>(
        _ queue: DispatchQueue, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}

private func timeval(_ duration: Duration) -> Glibc.timeval {
    let (seconds, attoseconds) = duration.components
    return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
}
