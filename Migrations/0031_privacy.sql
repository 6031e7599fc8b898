-- Privacy (issue "Receipts, privacy, and notifications that follow the reader"): what others
-- see of a user. Presence is followed by room-mates unless the user says otherwise (before:
-- by anyone); who shares a room is read from messenger.room_membership when the broker asks.
ALTER TABLE cloud.user_account
    ADD COLUMN shares_read_receipts boolean NOT NULL DEFAULT true,
    ADD COLUMN shares_typing boolean NOT NULL DEFAULT true,
    ADD COLUMN presence_audience text NOT NULL DEFAULT 'room-mates'
        CHECK (presence_audience IN ('everyone', 'room-mates', 'nobody'));
