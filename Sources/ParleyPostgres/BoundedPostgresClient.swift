import Logging
import ParleyCore
import ParleyRuntime
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// PostgresNIO's pooled client, with every statement watched while it runs.
///
/// PostgresNIO 1.33.2 writes a statement into its connection without a write promise: when
/// the pool hands out a connection that PostgreSQL closed a moment before (a restart, a
/// terminated backend), the statement is dropped and its caller waits forever. A bound on
/// the wait alone (30 s) held a serial job queue that long after a restart and took its
/// jobs out of order (a chaos run in CI). Here a statement's connection is watched as
/// ``PostgresNIO/PostgresConnection/whileOpen(within:_:)`` watches a held one: a closed
/// connection fails it within 100 ms, and one that has not answered within `answerTimeout`
/// (counted from the wait for a connection) fails it and is closed, not handed to the next
/// statement while this one may still run there. The rows are read whole before the
/// connection goes back to the pool. See the ParleyCore article *Dependency failures and
/// recovery*.
public struct BoundedPostgresClient: Sendable {
    /// The pool itself, for what runs on one held connection (`withConnection`).
    public let pool: PostgresClient
    let answerTimeout: Duration
    /// Connections kept leased for single statements; nil: each leases from the pool.
    let held: HeldConnections?

    init(pool: PostgresClient, answerTimeout: Duration, held: HeldConnections? = nil) {
        self.pool = pool
        self.answerTimeout = answerTimeout
        self.held = held
    }

    /// A pool for `configuration`, a quarter of it kept leased for single statements
    /// (``HeldConnections``), each given back after 5 s without work (half the idle timeout
    /// when that is shorter), so that transactions and connections held for a whole task (the
    /// relay's) have the rest, and the pool still closes what is no longer needed. None with a
    /// keep-alive query, which only a connection left idle in the pool runs, or a pool of fewer
    /// than four.
    init(configuration: PostgresConfiguration, logger: Logger) {
        let pool = PostgresClient(configuration: configuration.clientConfiguration, backgroundLogger: logger)
        let limit = configuration.maximumConnections / 4
        let held =
            limit > 0 && configuration.keepAlive == .zero
            ? HeldConnections(pool: pool, limit: limit, retireAfter: min(.seconds(5), configuration.idleTimeout / 2))
            : nil
        self.init(pool: pool, answerTimeout: configuration.answerTimeout, held: held)
    }

    /// Runs the pool; the held connections go back to it as it shuts down, so that their
    /// holders end.
    func run() async {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await pool.run()
            } onGracefulShutdown: {
                held?.shutDown()
            }
        } onCancel: {
            held?.shutDown()
        }
        held?.shutDown()
    }

    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> StatementRows<PostgresRow> {
        let logger = logger ?? Self.silent
        return try await watched { connection in
            StatementRows(try await connection.query(query, logger: logger, file: file, line: line).collect())
        }
    }

    public func execute<Statement: PostgresPreparedStatement, Row: Sendable>(
        _ statement: Statement, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> StatementRows<Row> where Row == Statement.Row {
        let logger = logger ?? Self.silent
        return try await watched { connection in
            StatementRows(
                try await connection.execute(statement, logger: logger, file: file, line: line).allRows())
        }
    }

    /// The same pool with another bound, for a statement known to take longer (or shorter).
    public func answering(within limit: Duration) -> BoundedPostgresClient {
        BoundedPostgresClient(pool: pool, answerTimeout: limit, held: held)
    }

    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await pool.withConnection(body)
    }

    /// Runs `body` on a held connection when one is free, else on one leased from the pool:
    /// for a transaction or a statement and its commit's confirmation, which end with the
    /// connection idle again. What keeps its connection for long (a relay's lock, `LISTEN`)
    /// leases from the pool (``withConnection(_:)``), not to keep a held one from statements.
    public func withShortLease<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        guard let held, let taken = held.take() else { return try await pool.withConnection(body) }
        defer { held.put(taken) }
        return try await body(taken.connection)
    }

    /// Runs `statement` on a leased open connection, watched from the lease on: the wait for
    /// a connection counts toward `answerTimeout` (PostgreSQL down: the pool keeps trying to
    /// connect), and once it is leased, its close fails the statement.
    private func watched<Result: Sendable>(
        _ statement: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let leased = LeasedConnection()
        let limit = answerTimeout
        return try await withAbandonment(
            when: { abandon in
                // The statement may still run there: its connection goes, not back to the pool.
                ConnectionWatch.start(
                    connection: { leased.current }, limit: limit, abandon: abandon, closingOnTimeout: leased.timedOut)
            },
            operation: {
                if let held, let taken = held.take() {
                    defer { held.put(taken) }
                    return try await Self.run(statement, on: taken.connection, leased)
                }
                // A connection closed before the statement was sent is given back and another
                // leased: nothing ran there, and the pool learns of a close a moment after it.
                for attempt in 1...Self.leases {
                    let answer: Result? = try await pool.withConnection { connection in
                        guard !connection.isClosed else { return nil }
                        return try await Self.run(statement, on: connection, leased)
                    }
                    if let answer { return answer }
                    try await Task.sleep(for: .milliseconds(attempt))
                }
                throw ConnectionLostError(description: "the PostgreSQL connections are closed")
            })
    }

    /// Runs `statement` on `connection`, watched as `leased`. Answered or failed as its bound
    /// passed, the statement may still run there: the connection is closed before it goes
    /// back (``PostgresNIO/PostgresConnection/closeForGood()``), not handed to the next one.
    private static func run<Result: Sendable>(
        _ statement: @Sendable (PostgresConnection) async throws -> Result, on connection: PostgresConnection,
        _ leased: LeasedConnection
    ) async throws -> Result {
        leased.current = connection
        do {
            let answer = try await statement(connection)
            if leased.hasTimedOut { await connection.closeForGood() }
            return answer
        } catch {
            if leased.hasTimedOut { await connection.closeForGood() }
            throw error
        }
    }

    static let leases = 10

    private static let silent = Logger(label: "parley.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// A statement's rows, read whole on their connection (``BoundedPostgresClient``), iterated
/// and decoded as PostgresNIO's row sequences are.
public struct StatementRows<Element: Sendable>: AsyncSequence, Sendable {
    public let elements: [Element]

    init(_ elements: [Element]) { self.elements = elements }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var rest: IndexingIterator<[Element]>
        public mutating func next() async throws -> Element? { rest.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: elements.makeIterator()) }

    /// Every row of a prepared statement.
    public func allRows() -> [Element] { elements }

    /// The first row of a prepared statement, or nil when there is none.
    public func firstRow() -> Element? { elements.first }
}

extension StatementRows where Element == PostgresRow {
    public func collect() -> [PostgresRow] { elements }
}

/// The connection a watched statement runs on, once it has one, and whether it was given up
/// on for not answering in time.
private final class LeasedConnection: Sendable {
    private let state = Mutex<(connection: PostgresConnection?, timedOut: Bool)>((nil, false))

    var current: PostgresConnection? {
        get { state.withLock { $0.connection } }
        set { state.withLock { $0.connection = newValue } }
    }

    var hasTimedOut: Bool { state.withLock { $0.timedOut } }

    func timedOut() { state.withLock { $0.timedOut = true } }
}
