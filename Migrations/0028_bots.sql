-- Bots (issue "Webhooks, a hook before a message is stored, and bots"): accounts that cannot
-- sign in with a password, made by administrators, acting through a server key of their own
-- (`api_key.bot_id`) and MQTT. A bot with a `webhookUrl` hears the commands addressed to it
-- (`/{name} …` in a room it is in) through a webhook of its own (`webhook.bot_id`): those
-- are deliveries like any webhook's, listed, but hidden from the webhook routes.
CREATE TABLE cloud.bot (
    user_account_id bigint      PRIMARY KEY REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    name            text        NOT NULL CHECK (name ~ '^[a-z0-9_-]{2,32}$'),
    webhook_id      bigint      REFERENCES cloud.webhook (id) ON DELETE SET NULL,
    api_key_id      bigint      NOT NULL REFERENCES cloud.api_key (id),
    -- The session its MQTT credentials are signed for (renewed with its key).
    session_id      bigint      REFERENCES cloud.session (id) ON DELETE SET NULL,
    client_id       text,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    deleted_at      timestamptz
);
-- A deleted bot's name may be taken again.
CREATE UNIQUE INDEX bot_name_key ON cloud.bot (name) WHERE deleted_at IS NULL;

ALTER TABLE cloud.api_key ADD COLUMN bot_id bigint REFERENCES cloud.user_account (id) ON DELETE CASCADE;

ALTER TABLE cloud.webhook ADD COLUMN bot_id bigint REFERENCES cloud.user_account (id) ON DELETE CASCADE;
-- A bot's webhook hears commands, not event types.
ALTER TABLE cloud.webhook DROP CONSTRAINT webhook_events_check;
ALTER TABLE cloud.webhook ADD CONSTRAINT webhook_events_check CHECK (cardinality(events) > 0 OR bot_id IS NOT NULL);

CREATE INDEX bot_webhook_idx ON cloud.bot (webhook_id) WHERE webhook_id IS NOT NULL;
CREATE INDEX bot_api_key_idx ON cloud.bot (api_key_id);
CREATE INDEX bot_session_idx ON cloud.bot (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX api_key_bot_idx ON cloud.api_key (bot_id) WHERE bot_id IS NOT NULL;
CREATE INDEX webhook_bot_idx ON cloud.webhook (bot_id) WHERE bot_id IS NOT NULL;
