-- Push preferences: per-member room settings (mute, quiet-hours override) and per-user
-- quiet hours in the user's time zone.

-- muted_until 'infinity' means muted until unmuted; NULL or a past time means not muted.
CREATE TABLE messenger.room_notification_setting (
    chat_room_id         bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_account_id      bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    muted_until          timestamptz,
    override_quiet_hours boolean     NOT NULL DEFAULT false,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_room_id, user_account_id)
);
CREATE INDEX room_notification_setting_user_idx ON messenger.room_notification_setting (user_account_id);

-- A daily period (minutes after local midnight; it may wrap past midnight) without pushes.
CREATE TABLE notifications.quiet_hours (
    user_account_id bigint      PRIMARY KEY REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    start_minute    smallint    NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
    end_minute      smallint    NOT NULL CHECK (end_minute BETWEEN 0 AND 1439 AND end_minute <> start_minute),
    time_zone       text        NOT NULL CHECK (length(time_zone) BETWEEN 1 AND 64),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
