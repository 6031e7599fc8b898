-- Account and room deletion, data export, retention and avatars.

-- A deleted account is ended at once (deleted_at: no login, sessions revoked, profile
-- wiped); the maintenance job then erases the rest of its personal data (erased_at).
ALTER TABLE cloud.user_account
    ADD COLUMN deleted_at timestamptz,
    ADD COLUMN erased_at timestamptz,
    ADD COLUMN avatar_file_id bigint REFERENCES cloud.file (id) ON DELETE SET NULL;
CREATE INDEX user_account_erasure_idx ON cloud.user_account (deleted_at)
    WHERE deleted_at IS NOT NULL AND erased_at IS NULL;
CREATE INDEX user_account_avatar_idx ON cloud.user_account (avatar_file_id) WHERE avatar_file_id IS NOT NULL;

-- A deleted room has no members from the moment it is deleted; the job erases the rest.
-- retention_days: messages older than that are purged (null: the server's default);
-- purged_seq: the highest `seq` purged, read by everyone (unread counts start after it).
ALTER TABLE messenger.chat_room
    ADD COLUMN deleted_at timestamptz,
    ADD COLUMN retention_days integer CHECK (retention_days BETWEEN 1 AND 36500),
    ADD COLUMN purged_seq bigint NOT NULL DEFAULT 0,
    ADD COLUMN avatar_file_id bigint REFERENCES cloud.file (id) ON DELETE SET NULL;
CREATE INDEX chat_room_deleted_idx ON messenger.chat_room (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX chat_room_avatar_idx ON messenger.chat_room (avatar_file_id) WHERE avatar_file_id IS NOT NULL;

-- One export per user at a time; the ZIP is a file of the user's, kept until expires_at.
CREATE TABLE cloud.data_export (
    user_account_id bigint      PRIMARY KEY REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    status          text        NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
    requested_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    file_id         bigint      REFERENCES cloud.file (id) ON DELETE SET NULL,
    expires_at      timestamptz
);
CREATE INDEX data_export_file_idx ON cloud.data_export (file_id) WHERE file_id IS NOT NULL;
CREATE INDEX data_export_status_idx ON cloud.data_export (status, requested_at);
