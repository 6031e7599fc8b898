-- Push registrations (source §4.3.1 "notifications"): one row per device registered for push.
CREATE SCHEMA notifications;

CREATE TABLE notifications.user_push_token (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    device_id       bigint      NOT NULL UNIQUE REFERENCES cloud.device (id) ON DELETE CASCADE,
    provider        text        NOT NULL CHECK (provider IN ('apns', 'fcm', 'webhook')),
    token           text        NOT NULL CHECK (length(token) BETWEEN 1 AND 4096),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (provider, token)
);
CREATE INDEX user_push_token_user_account_idx ON notifications.user_push_token (user_account_id);
