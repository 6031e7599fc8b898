-- Moderation: deactivated accounts, and reports of messages (the message as it was when
-- reported is kept in the report, whatever becomes of the message).
ALTER TABLE cloud.user_account ADD COLUMN deactivated_at timestamptz;

CREATE TABLE messenger.report (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id         bigint      REFERENCES messenger.message (id) ON DELETE SET NULL,
    chat_room_id       bigint      REFERENCES messenger.chat_room (id) ON DELETE SET NULL,
    reporter_id        bigint      REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    reason             text        NOT NULL CHECK (reason IN ('spam', 'abuse', 'illegal', 'other')),
    comment            text        CHECK (length(comment) <= 1000),
    -- The message when it was reported.
    message_seq        bigint      NOT NULL,
    message_sender_id  bigint      REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    message_content    text        NOT NULL,
    message_file_id    bigint,
    message_created_at timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    resolved_at        timestamptz,
    resolved_by_id     bigint      REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    action             text        CHECK (action IN ('dismiss', 'delete-message', 'deactivate-user')),
    note               text        CHECK (length(note) <= 1000),
    -- Once per reporter and message.
    UNIQUE (message_id, reporter_id)
);
-- The admins' queues: open reports oldest first, resolved ones newest first.
CREATE INDEX report_open_idx ON messenger.report (id) WHERE resolved_at IS NULL;
CREATE INDEX report_room_idx ON messenger.report (chat_room_id);
CREATE INDEX report_reporter_idx ON messenger.report (reporter_id);
CREATE INDEX report_sender_idx ON messenger.report (message_sender_id);
CREATE INDEX report_resolved_by_idx ON messenger.report (resolved_by_id);
