-- Search off the send's path: a message's words are indexed when the relay has published it,
-- in a table of their own, instead of in the transaction that stores it (see the Search
-- article). Until then the message is found by reading its outbox row's message, so search
-- never misses a stored message. The fill below runs in the migration's transaction, sends
-- waiting: about 10 seconds per million messages on a 2-core machine.

-- A message's searchable words (what migration 0018's index was built on).
CREATE FUNCTION messenger.search_words(content text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_tsvector('simple'::regconfig, messenger.search_text(content));

-- One row per message: its room, and its words (null once deleted: never found). No foreign
-- key, whose check would lock each message row as it is indexed: the trigger on the message
-- table below removes a row with its message.
CREATE TABLE messenger.message_search (
    message_id   bigint   PRIMARY KEY,
    chat_room_id bigint   NOT NULL,
    words        tsvector
);

-- The relay deletes a new message's outbox row once it has published it: the same statement
-- indexes the message. An edit or a deletion that came first has written the row already.
CREATE FUNCTION messenger.index_published_messages() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO messenger.message_search (message_id, chat_room_id, words)
    SELECT m.id, m.chat_room_id, messenger.search_words(m.content)
    FROM published p JOIN messenger.message m ON m.id = p.message_id
    WHERE m.deleted_at IS NULL
    ON CONFLICT (message_id) DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_indexes_published_messages
    AFTER DELETE ON messenger.outbox REFERENCING OLD TABLE AS published
    FOR EACH STATEMENT EXECUTE FUNCTION messenger.index_published_messages();

-- An edit is found by its new text only, a deleted message never: both rewrite the row,
-- whether or not the relay has indexed the message yet.
CREATE FUNCTION messenger.reindex_message() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO messenger.message_search (message_id, chat_room_id, words)
    VALUES (NEW.id, NEW.chat_room_id,
            CASE WHEN NEW.deleted_at IS NULL THEN messenger.search_words(NEW.content) END)
    ON CONFLICT (message_id) DO UPDATE SET words = EXCLUDED.words;
    RETURN NULL;
END
$$;
CREATE TRIGGER message_reindexed
    AFTER UPDATE OF content, deleted_at ON messenger.message
    FOR EACH ROW
    WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
    EXECUTE FUNCTION messenger.reindex_message();

-- A message erased or purged takes its words with it.
CREATE FUNCTION messenger.unindex_messages() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM messenger.message_search s USING gone g WHERE s.message_id = g.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER message_unindexed
    AFTER DELETE ON messenger.message REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION messenger.unindex_messages();

-- The messages stored so far (those still in the outbox too: their relay finds them indexed).
INSERT INTO messenger.message_search (message_id, chat_room_id, words)
SELECT id, chat_room_id, messenger.search_words(content) FROM messenger.message WHERE deleted_at IS NULL;

-- Words for a query's terms (a user of few messages' worth of rooms reads those rows
-- instead); rooms and ids for reading a user's rooms, or the newest messages, in id order.
CREATE INDEX message_search_words_idx ON messenger.message_search USING gin (words) WITH (fastupdate = off);
CREATE INDEX message_search_room_idx ON messenger.message_search (chat_room_id, message_id);

DROP INDEX messenger.message_search_idx;
