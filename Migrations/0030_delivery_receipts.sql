-- Delivery receipts (issue "Receipts, privacy, and notifications that follow the reader"): how
-- far each member's devices received a room, moved forward only. Reading implies receiving:
-- what is shared is the greater of this and the member's read marker.
CREATE TABLE messenger.delivery_marker (
    chat_room_id    bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    seq             bigint      NOT NULL CHECK (seq > 0),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (chat_room_id, user_account_id)
);
CREATE INDEX delivery_marker_user_idx ON messenger.delivery_marker (user_account_id);
