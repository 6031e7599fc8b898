-- Every message moves its room's last_seq, last_message_at and updated_at forward. While any
-- of those columns is indexed, each such update writes a new entry into every one of the
-- room's twelve indexes; with none indexed, PostgreSQL updates the row in place on its page
-- (a HOT update) and touches no index. No query reads these three indexes: the room list
-- starts from the caller's memberships and orders that handful by activity, and the
-- activity index's expression is not the one it orders by.
DROP INDEX messenger.chat_room_activity_idx;
DROP INDEX messenger.chat_room_last_message_at_idx;
DROP INDEX messenger.chat_room_updated_at_idx;
-- Room for the in-place updates on each page written from now on.
ALTER TABLE messenger.chat_room SET (fillfactor = 80);
