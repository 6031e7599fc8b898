-- Every message moves its sender's read marker: message_id, seq and updated_at. message_id was
-- indexed (for its foreign key's cascade) and checked against messenger.message, so every move
-- wrote a new row version, an entry into each of the table's three indexes, and a lock on the
-- message row with its own WAL record: a third of the message's index entries. A marker's seq
-- is what counts (unread counts and receipts read seq); its message_id names the message read.
-- A purge that deletes that message deletes the marker itself, as the cascade did
-- (PostgresErasureRepository.purgeMessages), and nothing else deletes a message but its room's
-- deletion, which takes the room's markers with it. With no indexed column moving, PostgreSQL
-- moves a marker in place on its page (a HOT update) and touches no index.
ALTER TABLE messenger.read_marker DROP CONSTRAINT read_marker_message_id_fkey;
DROP INDEX messenger.read_marker_message_idx;
-- Room for the in-place updates on each page written from now on.
ALTER TABLE messenger.read_marker SET (fillfactor = 80);
