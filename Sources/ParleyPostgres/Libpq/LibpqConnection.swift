import CLibpq
import Dispatch
import Glibc

/// One connection through libpq, PostgreSQL's C client, for what psql does and PostgresNIO's
/// extended query protocol cannot: a whole script of statements in one round trip (`PQexec`,
/// the simple query protocol), run exactly as `psql -f` runs it. `parley migrate` uses it;
/// the service's queries go through PostgresNIO (see the *Why PostgresNIO* article).
///
/// libpq blocks its caller. Every call runs on the connection's own serial queue, whose
/// threads are libdispatch's overcommit ones, never on Swift concurrency's few threads.
public final class LibpqConnection: @unchecked Sendable {
    /// `PGconn *`, touched only on `queue`.
    private let connection: OpaquePointer
    private let queue: DispatchQueue

    private init(connection: OpaquePointer, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }

    /// Connects with the same settings as the service's pool (`PARLEY_POSTGRES_*`). The
    /// password goes to libpq alone: no message of this type contains it.
    public static func connect(_ configuration: PostgresConfiguration, applicationName: String) async throws
        -> LibpqConnection
    {
        let queue = DispatchQueue(label: "parley.libpq")
        let parameters: [(String, String)] = [
            ("host", configuration.host), ("port", String(configuration.port)), ("user", configuration.user),
            ("password", configuration.password ?? ""), ("dbname", configuration.database),
            ("sslmode", configuration.tls.rawValue),
            // Whole seconds, and libpq takes less than 2 as 2.
            ("connect_timeout", String(max(2, configuration.connectTimeout.components.seconds))),
            ("application_name", applicationName),
        ]
        return try await run(on: queue) {
            let connection = withCStrings(parameters.map(\.0)) { keywords in
                withCStrings(parameters.map(\.1)) { values in PQconnectdbParams(keywords, values, 0) }
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

    /// Runs `sql`, one statement or a whole script, as psql runs a file: statements in order
    /// until one fails. Answers the last statement's rows (text, nil for NULL).
    @discardableResult
    public func execute(_ sql: String) async throws -> [[String?]] {
        try await Self.run(on: queue) { try Self.rows(of: PQexec(self.connection, sql), self.connection) }
    }

    /// Runs one statement with `$1`… bound to `parameters` (text), never spliced into the SQL.
    @discardableResult
    public func execute(_ sql: String, parameters: [String]) async throws -> [[String?]] {
        try await Self.run(on: queue) {
            let result = withCStrings(parameters) { values in
                PQexecParams(self.connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
            }
            return try Self.rows(of: result, self.connection)
        }
    }

    /// Closes the connection; an open transaction is rolled back by the server.
    public func close() async {
        _ = try? await Self.run(on: queue) { PQfinish(self.connection) }
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
