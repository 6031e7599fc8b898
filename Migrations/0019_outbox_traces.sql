-- Traces: a new message's outbox row carries the W3C traceparent of the span that stored it,
-- so the relay, the fan-out and the push continue the same trace (null while tracing is off).
-- A nullable column without a default: added without rewriting the table.
ALTER TABLE messenger.outbox ADD COLUMN traceparent text;
