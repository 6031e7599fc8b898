import Foundation
import PostgresNIO

/// The webhook sender's claim of due deliveries (``PostgresWebhookRepository/claimDue(lanes:perLane:lease:)``):
/// `$1` lanes at most, `$2` deliveries a lane, leased for `$3` seconds. Prepared once per
/// connection, as it polls twice a second whether or not anything is due: parsed and planned
/// each time, it cost PostgreSQL about 1.2 ms a poll, ten times its run.
///
/// The lanes with pending deliveries are found by a skip scan of the pending index (one
/// probe per lane, PostgreSQL 15 has no skip scan of its own), so a receiver down for days,
/// its lanes long, costs no more per claim than one that is up.
struct ClaimDueWebhooksStatement: PostgresPreparedStatement {
    static let name = String(reflecting: Self.self)
    static let sql = """
        WITH RECURSIVE lanes AS (
            (SELECT webhook_id, lane FROM cloud.webhook_delivery WHERE status = 'pending'
             ORDER BY webhook_id, lane, seq LIMIT 1)
            UNION ALL
            SELECT next.webhook_id, next.lane FROM lanes l, LATERAL (
                SELECT webhook_id, lane FROM cloud.webhook_delivery
                WHERE status = 'pending' AND (webhook_id, lane) > (l.webhook_id, l.lane)
                ORDER BY webhook_id, lane, seq LIMIT 1) next
        ), heads AS (
            SELECT h.webhook_id, h.lane, h.seq FROM lanes l
            JOIN cloud.webhook w ON w.id = l.webhook_id AND w.enabled,
            LATERAL (
                SELECT webhook_id, lane, seq, next_attempt_at, leased_until FROM cloud.webhook_delivery d
                WHERE d.webhook_id = l.webhook_id AND d.lane = l.lane AND d.status = 'pending'
                ORDER BY d.seq LIMIT 1) h
            WHERE h.next_attempt_at <= clock_timestamp()
              AND (h.leased_until IS NULL OR h.leased_until < clock_timestamp())
            ORDER BY h.next_attempt_at LIMIT $1::bigint
        ), batch AS (
            SELECT b.id FROM heads h, LATERAL (
                SELECT id FROM cloud.webhook_delivery d
                WHERE d.webhook_id = h.webhook_id AND d.lane = h.lane AND d.status = 'pending' AND d.seq >= h.seq
                ORDER BY d.seq LIMIT $2::bigint) b
        )
        UPDATE cloud.webhook_delivery d
        SET leased_until = clock_timestamp() + make_interval(secs => $3::float8)
        FROM batch, cloud.webhook w
        WHERE d.id = batch.id AND w.id = d.webhook_id AND d.status = 'pending'
          AND (d.leased_until IS NULL OR d.leased_until < clock_timestamp())
        RETURNING d.id, d.webhook_id, w.url, w.signing_key, d.body, d.first_attempt_at, d.attempts, w.failing_since,
                  w.bot_id, d.lane, d.seq
        """
    typealias Row = (String, Int64, String, Data, String, Date?, Int32, Date?, Int64?, Int64, Int64)
    let lanes: Int64
    let perLane: Int64
    let leaseSeconds: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        try bindings.append(lanes)
        try bindings.append(perLane)
        try bindings.append(leaseSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
