-- Search: every word of a query matches a word of a message (or a room's name) as a prefix,
-- case- and accent-insensitively in any language, through one GIN index of PostgreSQL's own
-- full-text search (no service of its own to run).

-- unaccent and btree_gin ship with PostgreSQL and are trusted extensions: the database's owner
-- may create them. A role that may not is told what to ask for.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;
    CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE EXCEPTION 'Parley''s search needs the unaccent and btree_gin extensions, which this role may not create'
        USING HINT = 'As a superuser, run CREATE EXTENSION unaccent SCHEMA public; CREATE EXTENSION btree_gin '
            || 'SCHEMA public; in this database (or make Parley''s role the database''s owner), then run '
            || 'parley migrate up again.';
END
$$;

-- Text as search sees it: lower case, without diacritics, and each character of scripts
-- written without spaces (kana, CJK ideographs, Hangul) a word of its own, so that the
-- `simple` parser cuts Japanese or Chinese into searchable pieces. Immutable (the dictionary
-- is named, not looked up), so an index can use it.
CREATE FUNCTION messenger.search_text(content text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN regexp_replace(
        public.unaccent('public.unaccent'::regdictionary, lower(content)),
        '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])', ' \1 ', 'g');

-- Deleted messages are never found; an edited one by its new text (the index follows it).
-- The room is a column of the index (btree_gin): a search intersects the rooms the user reads
-- with the words inside the index, and fetches only messages that match both.
CREATE INDEX message_search_idx ON messenger.message
    USING gin (chat_room_id, to_tsvector('simple'::regconfig, messenger.search_text(content)))
    WITH (fastupdate = off)
    WHERE deleted_at IS NULL;

-- A query's terms as a tsquery: each word a prefix, each phrase's words in order, all of them
-- required. Built from the lexemes PostgreSQL itself cuts from the terms, each quoted: nothing
-- of the user's text is ever parsed as query syntax.
CREATE FUNCTION messenger.search_query(terms text[]) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (
        SELECT string_agg('(' || phrase || ')', ' & ')::tsquery
        FROM (
            SELECT (
                SELECT string_agg(
                    '''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || ''':*', ' <-> '
                    ORDER BY l.position)
                FROM (
                    SELECT v.lexeme, unnest(v.positions) AS position
                    FROM unnest(to_tsvector('simple'::regconfig, messenger.search_text(t.term))) v
                ) l
            ) AS phrase
            FROM unnest(terms) AS t(term)
        ) p
        WHERE phrase IS NOT NULL
    );
