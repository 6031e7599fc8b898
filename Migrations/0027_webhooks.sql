-- Event webhooks (issue "Webhooks, a hook before a message is stored, and bots"): endpoints of
-- the app's backend, each with the event types it hears and the HMAC key its requests are
-- signed with (kept as is: Parley signs with it, as it keeps its push providers' keys).
CREATE TABLE cloud.webhook (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url           text        NOT NULL CHECK (length(url) <= 2000),
    events        text[]      NOT NULL CHECK (cardinality(events) > 0),
    description   text        CHECK (length(description) <= 500),
    signing_key   bytea       NOT NULL,
    enabled       boolean     NOT NULL DEFAULT true,
    -- Since when every attempt failed; null after a success. Three days of it disable the webhook.
    failing_since timestamptz,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- One event on its way to one webhook. Deliveries of one lane (a webhook and a room; 0 for
-- events of no room) go in `seq` order: the oldest pending one of a lane holds the others back
-- until it succeeds or dies. `id` is the `webhook-id` header, made of the event's id and the
-- webhook's, so an event queued twice is delivered once.
CREATE TABLE cloud.webhook_delivery (
    id               text        PRIMARY KEY,
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    webhook_id       bigint      NOT NULL REFERENCES cloud.webhook (id) ON DELETE CASCADE,
    lane             bigint      NOT NULL,
    type             text        NOT NULL,
    body             text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    first_attempt_at timestamptz,
    next_attempt_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    leased_until     timestamptz
);
CREATE INDEX webhook_delivery_lane_idx ON cloud.webhook_delivery (webhook_id, lane, seq) WHERE status = 'pending';
CREATE INDEX webhook_delivery_list_idx ON cloud.webhook_delivery (webhook_id, seq);

-- Each attempt of a delivery: the answer's status, or why there was none.
CREATE TABLE cloud.webhook_attempt (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id text        NOT NULL REFERENCES cloud.webhook_delivery (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    status_code integer,
    error       text,
    duration_ms integer     NOT NULL
);
CREATE INDEX webhook_attempt_delivery_idx ON cloud.webhook_attempt (delivery_id, id);
