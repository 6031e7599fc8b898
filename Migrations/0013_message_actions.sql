-- Message actions: edits, deletion as tombstones, replies, mentions, reactions, and the
-- notification level "only when I'm mentioned" (see the DocC article "Tombstones and the
-- changedSince sync").

-- A deleted message keeps its row and `seq` (history has no gaps): its content becomes empty,
-- its file is detached, and `deleted_at`/`deleted_by_id` say when and by whom.
ALTER TABLE messenger.message
    ADD COLUMN edited_at     timestamptz,
    ADD COLUMN deleted_at    timestamptz,
    ADD COLUMN deleted_by_id bigint REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    ADD COLUMN reply_to_id   bigint REFERENCES messenger.message (id) ON DELETE SET NULL,
    -- Users the sender mentioned (readers of the room when they were named).
    ADD COLUMN mentions      bigint[] NOT NULL DEFAULT '{}';
-- A thread, in order.
CREATE INDEX message_reply_to_idx ON messenger.message (reply_to_id, seq) WHERE reply_to_id IS NOT NULL;
-- When each message last changed (an edit, its deletion, a reaction): what `changedSince`
-- pages by. A table of its own, so a reaction writes no new version of the message row and
-- none of its index entries.
CREATE TABLE messenger.message_change (
    message_id   bigint      PRIMARY KEY REFERENCES messenger.message (id) ON DELETE CASCADE,
    chat_room_id bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    changed_at   timestamptz NOT NULL
);
-- What changed in a room since a time, in the order it changed.
CREATE INDEX message_change_room_idx ON messenger.message_change (chat_room_id, changed_at, message_id);
-- Deleted messages a reader had not read yet leave the unread count.
CREATE INDEX message_deleted_idx ON messenger.message (chat_room_id, seq) WHERE deleted_at IS NOT NULL;
CREATE INDEX message_deleted_by_idx ON messenger.message (deleted_by_id) WHERE deleted_by_id IS NOT NULL;

-- The highest `seq` of a room's messages that mention someone, and of its deleted messages:
-- a reader who has read past them has no unread mention and no deleted unread message to
-- count, which the room list then knows without looking further.
ALTER TABLE messenger.chat_room
    ADD COLUMN last_mention_seq bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_deleted_seq bigint NOT NULL DEFAULT 0;

-- One row per mentioned user of a message that is not deleted: a room's unread mentions
-- are the rows after the reader's marker.
CREATE TABLE messenger.mention (
    user_account_id bigint NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    chat_room_id    bigint NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    seq             bigint NOT NULL,
    message_id      bigint NOT NULL REFERENCES messenger.message (id) ON DELETE CASCADE,
    PRIMARY KEY (user_account_id, chat_room_id, seq)
);
CREATE INDEX mention_message_idx ON messenger.mention (message_id);
CREATE INDEX mention_room_idx ON messenger.mention (chat_room_id);

-- One row per user and key on a message; `key` is one emoji or a `:shortcode:`.
CREATE TABLE messenger.reaction (
    message_id      bigint      NOT NULL REFERENCES messenger.message (id) ON DELETE CASCADE,
    key             text        NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (message_id, key, user_account_id)
);
CREATE INDEX reaction_user_idx ON messenger.reaction (user_account_id);

-- `all`, `mentions` (push only when mentioned) or `none`; a mute (`muted_until`) means
-- `none` until it ends.
ALTER TABLE messenger.room_notification_setting
    ADD COLUMN level text NOT NULL DEFAULT 'all' CHECK (level IN ('all', 'mentions', 'none'));
