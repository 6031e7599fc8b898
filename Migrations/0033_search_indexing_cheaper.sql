-- The relay's statement indexes every published message's words (the trigger of migration
-- 0020); at 1,000 messages/s that was more than half of the relay's backend.
--
-- search_text calls unaccent, which PostgreSQL declares STABLE (its dictionary is a file), so
-- search_text and search_words, declared IMMUTABLE for the expression index of migration 0018,
-- could not be inlined: each row ran them through the SQL-function executor, which also parsed
-- and planned both bodies again in every execution of the trigger's insert. That index went in
-- 0020 (the words are a column now), so nothing needs them IMMUTABLE: as STABLE they are
-- inlined into the queries that call them, one expression.
ALTER FUNCTION messenger.search_text(text) STABLE;
ALTER FUNCTION messenger.search_words(text) STABLE;

-- Each message put about a dozen words into the GIN index one entry at a time, each a descent
-- of the tree. With the pending list, a batch's entries are appended to it, and once it holds
-- 256 kB (about a thousand messages' words) the inserting statement or autovacuum merges it
-- into the tree in key order, many entries per page: a quarter of the cost per message. A
-- search that reads the word index also reads the pending list, at most those 256 kB.
ALTER INDEX messenger.message_search_words_idx SET (fastupdate = on, gin_pending_list_limit = 256);
