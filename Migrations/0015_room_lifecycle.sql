-- An archived room is read-only (no sends, edits or reactions) but still readable and listed;
-- a room's description is set by its admins. Neither is indexed: the room's row is still
-- updated in place by every message.
ALTER TABLE messenger.chat_room
    ADD COLUMN archived_at timestamptz,
    ADD COLUMN description text CHECK (length(description) <= 500);
