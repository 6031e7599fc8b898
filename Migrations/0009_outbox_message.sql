-- A new message's outbox row names the message rather than carrying its event: storing a
-- message is then one statement (no event to encode between the insert and the outbox row),
-- and the relay encodes the event once, from the stored row, for every topic it reaches.
-- No foreign key: a row whose message is gone (its room deleted) is published as nothing.
ALTER TABLE messenger.outbox ADD COLUMN message_id bigint;
