-- File content kept in PostgreSQL (the `postgres` blob store): several API nodes need no
-- shared disk. A blob is readable once `complete`; chunks of an abandoned upload go with
-- their blob row.
CREATE TABLE cloud.blob (
    key        text        PRIMARY KEY CHECK (length(key) BETWEEN 16 AND 80),
    size       bigint      NOT NULL DEFAULT 0 CHECK (size >= 0),
    chunk_size integer     NOT NULL CHECK (chunk_size > 0),
    complete   boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blob_incomplete_idx ON cloud.blob (created_at) WHERE NOT complete;

CREATE TABLE cloud.blob_chunk (
    blob_key text    NOT NULL REFERENCES cloud.blob (key) ON DELETE CASCADE,
    index    integer NOT NULL CHECK (index >= 0),
    data     bytea   NOT NULL,
    PRIMARY KEY (blob_key, index)
);
-- Chunks are large: keep them out of the main heap's compression attempts.
ALTER TABLE cloud.blob_chunk ALTER COLUMN data SET STORAGE EXTERNAL;
