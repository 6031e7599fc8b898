-- An archived room is read-only (no sends, edits or reactions) but still readable and listed;
-- a room's description is set by its admins. Neither is indexed: the room's row is still
-- updated in place by every message.
ALTER TABLE messenger.chat_room
    ADD COLUMN archived_at timestamptz,
    ADD COLUMN description text CHECK (length(description) <= 500);

-- A member hides a room from their list until a message arrives after `hidden_at`.
CREATE TABLE messenger.room_hidden (
    chat_room_id    bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    hidden_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (user_account_id, chat_room_id)
);
CREATE INDEX room_hidden_room_idx ON messenger.room_hidden (chat_room_id);
