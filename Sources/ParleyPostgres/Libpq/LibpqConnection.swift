import CLibpq
import Dispatch
import Glibc

/// One connection through libpq, PostgreSQL's C client, for what PostgresNIO's extended query
/// protocol cannot do: a whole script of statements in one round trip (`PQexec`, the simple
/// query protocol), split by PostgreSQL's own parser. `parley migrate` uses it; the service's
/// queries go through PostgresNIO (see the *Why PostgresNIO* article).
///
/// libpq blocks its caller. Every call runs on the connection's own serial queue, whose
/// threads are libdispatch's overcommit ones, never on Swift concurrency's few threads.
public final class LibpqConnection: @unchecked Sendable {
    /// `PGconn *`, touched only on `queue`; nil once closed.
    private var connection: OpaquePointer?
    private let queue: DispatchQueue

    private init(connection: OpaquePointer, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }

    /// A connection dropped unclosed is still finished, on its queue.
    deinit {
        guard let connection else { return }
        let handle = Handle(pointer: connection)
        queue.async { PQfinish(handle.pointer) }
    }

    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }

    /// Connects with the same settings as the service's pool (`PARLEY_POSTGRES_*`). The
    /// password goes to libpq alone: no message of this type contains it. `require` verifies
    /// the server's certificate and name against the system's trust store, as the service's
    /// pool does; `prefer` encrypts when the server offers it, unverified (libpq's `prefer`).
    public static func connect(_ configuration: PostgresConfiguration, applicationName: String) async throws
        -> LibpqConnection
    {
        let queue = DispatchQueue(label: "parley.libpq")
        var parameters: [(String, String)] = [
            ("host", configuration.host), ("port", String(configuration.port)), ("user", configuration.user),
            ("dbname", configuration.database),
            // Whole seconds, and libpq takes less than 2 as 2.
            ("connect_timeout", String(max(2, configuration.connectTimeout.components.seconds))),
            ("application_name", applicationName),
            // The files are UTF-8, and error positions count characters of what was sent.
            ("client_encoding", "UTF8"),
        ]
        switch configuration.tls {
        case .disable, .prefer: parameters.append(("sslmode", configuration.tls.rawValue))
        case .require:
            parameters += [("sslmode", "verify-full"), ("sslrootcert", "/etc/ssl/certs/ca-certificates.crt")]
        }
        if let password = configuration.password { parameters.append(("password", password)) }
        let keywords = parameters.map(\.0)
        let values = parameters.map(\.1)
        return try await run(on: queue) {
            let connection = withCStrings(keywords) { keywords in
                withCStrings(values) { values in PQconnectdbParams(keywords, values, 0) }
            }
            guard let connection else { throw LibpqError(message: "libpq could not allocate a connection") }
            guard PQstatus(connection) == CONNECTION_OK else {
                let message = String(cString: PQerrorMessage(connection))
                PQfinish(connection)
                throw LibpqError(message: "could not connect to PostgreSQL: \(message.trimmed)")
            }
            // The server's notices ("already exists, skipping") would go to standard error.
            PQsetNoticeProcessor(connection, { _, _ in }, nil)
            return LibpqConnection(connection: connection, queue: queue)
        }
    }

    /// Runs `sql`, one statement or a whole script, in one simple-protocol query: statements
    /// in order until one fails. Answers the last statement's rows (text, nil for NULL).
    @discardableResult
    public func execute(_ sql: String) async throws -> [[String?]] {
        try await onQueue { connection in try Self.rows(of: PQexec(connection, sql), connection) }
    }

    /// Runs one statement with `$1`… bound to `parameters` (text), never spliced into the SQL.
    @discardableResult
    public func execute(_ sql: String, parameters: [String]) async throws -> [[String?]] {
        try await onQueue { connection in
            let result = withCStrings(parameters) { values in
                PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
            }
            return try Self.rows(of: result, connection)
        }
    }

    /// Whether a transaction is open and not failed (a script that ran `COMMIT` or `ROLLBACK`
    /// ended it).
    public func inTransaction() async throws -> Bool {
        try await onQueue { PQtransactionStatus($0) == PQTRANS_INTRANS }
    }

    /// Closes the connection, once; an open transaction is rolled back by the server.
    public func close() async {
        _ = try? await Self.run(on: queue) {
            if let connection = self.connection { PQfinish(connection) }
            self.connection = nil
        }
    }

    private func onQueue<Value: Sendable>(_ body: @escaping @Sendable (OpaquePointer) throws -> Value)
        async throws -> Value
    {
        try await Self.run(on: queue) {
            guard let connection = self.connection else { throw LibpqError(message: "the connection is closed") }
            return try body(connection)
        }
    }

    private static func rows(of result: OpaquePointer?, _ connection: OpaquePointer) throws -> [[String?]] {
        guard let result else {
            throw LibpqError(message: String(cString: PQerrorMessage(connection)).trimmed)
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return []
        case PGRES_TUPLES_OK:
            return (0..<PQntuples(result)).map { row in
                (0..<PQnfields(result)).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                }
            }
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            throw LibpqError(message: "COPY to or from the client is not supported here (use INSERT)")
        default:
            throw LibpqError(result: result)
        }
    }

    private static func run<Value: Sendable>(
        on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { try body() }) }
        }
    }
}

/// C strings for libpq's arrays: nil-terminated, alive during `body` only.
private func withCStrings<Value>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> Value) -> Value {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers.map { $0.map { UnsafePointer($0) } })
}

extension String {
    fileprivate var trimmed: String { String(self.reversed().drop { $0.isNewline }.reversed()) }
}
