-- Messages that carry more than text (issue "Parley as the chat of someone else's app"):
-- a type (`text`, `system` from the app's server, or the app's own `x-…`), the app's own
-- JSON metadata, and up to 10 attached files.
ALTER TABLE messenger.message
    ADD COLUMN type text NOT NULL DEFAULT 'text'
        CHECK (type IN ('text', 'system') OR type ~ '^x-[a-z0-9.-]{1,62}$'),
    ADD COLUMN metadata jsonb CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object');

-- Every file of a message, in the order sent. `message.file_id` stays the first one, for the
-- clients and queries that know one file.
CREATE TABLE messenger.message_attachment (
    message_id bigint   NOT NULL REFERENCES messenger.message (id) ON DELETE CASCADE,
    position   smallint NOT NULL CHECK (position BETWEEN 0 AND 9),
    file_id    bigint   NOT NULL REFERENCES cloud.file (id) ON DELETE CASCADE,
    PRIMARY KEY (message_id, position),
    UNIQUE (message_id, file_id)
);
CREATE INDEX message_attachment_file_idx ON messenger.message_attachment (file_id);

INSERT INTO messenger.message_attachment (message_id, position, file_id)
SELECT id, 0, file_id FROM messenger.message WHERE file_id IS NOT NULL;

-- A system message's uid is the app server's retry key in its room.
CREATE UNIQUE INDEX message_system_uid_key ON messenger.message (chat_room_id, uid) WHERE type = 'system';

-- An open report holds every file of its message as evidence, not only the first.
ALTER TABLE messenger.report ADD COLUMN message_file_ids bigint[] NOT NULL DEFAULT '{}';
UPDATE messenger.report SET message_file_ids = ARRAY[message_file_id] WHERE message_file_id IS NOT NULL;
