-- An outbox row may go to another topic than its room's: the broker plugin's $CONTROL
-- commands that stop deliveries to users who lost the room, in the same transaction as
-- the membership change.
ALTER TABLE messenger.outbox ADD COLUMN topic text;
