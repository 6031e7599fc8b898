-- Blocks: a user blocked by another cannot open or write in their two-party room, sees no
-- presence of the blocker and pushes them nothing; in multiparty rooms nothing changes.
CREATE TABLE messenger.user_block (
    blocker_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    blocked_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (blocker_id, blocked_id),
    CHECK (blocker_id <> blocked_id)
);
-- Sends and the broker ask by the blocked user.
CREATE INDEX user_block_blocked_idx ON messenger.user_block (blocked_id, blocker_id);

-- Commands for the broker that concern no room (a block's presence, an account's clients) go
-- through the outbox too, with their topic and no room.
ALTER TABLE messenger.outbox ALTER COLUMN chat_room_id DROP NOT NULL,
    ADD CONSTRAINT outbox_room_or_topic CHECK (chat_room_id IS NOT NULL OR topic IS NOT NULL);
