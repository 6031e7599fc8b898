-- Server keys (issue "Parley as the chat of someone else's app"): the app's backend calls the
-- server API with `Authorization: Bearer pk_…`. Only the SHA-256 of a secret is kept; a
-- rotated key's previous secret stays valid until `previous_valid_until`.
CREATE TABLE cloud.api_key (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                 text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    scopes               text[]      NOT NULL CHECK (cardinality(scopes) > 0),
    issuer               text        NOT NULL,
    secret_hash          bytea       NOT NULL UNIQUE,
    previous_secret_hash bytea       UNIQUE,
    previous_valid_until timestamptz,
    created_by_id        bigint      REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at           timestamptz,
    last_used_at         timestamptz,
    revoked_at           timestamptz
);
CREATE INDEX api_key_created_by_idx ON cloud.api_key (created_by_id) WHERE created_by_id IS NOT NULL;

-- Who (a key or an administrator) did what through the server API and the admin routes.
CREATE TABLE cloud.audit_entry (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor_type text        NOT NULL CHECK (actor_type IN ('key', 'user')),
    actor_id   bigint      NOT NULL,
    action     text        NOT NULL,
    target     text        NOT NULL,
    address    text
);
