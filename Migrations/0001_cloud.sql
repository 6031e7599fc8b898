-- Accounts, applications and their roles, groups, devices, sessions, files (source §4.3.1 "cloud").
CREATE SCHEMA cloud;

CREATE TABLE cloud.user_account (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email            text        NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
    first_name       text        NOT NULL CHECK (length(first_name) <= 100),
    last_name        text        NOT NULL CHECK (length(last_name) <= 100),
    password_hash    text        NOT NULL,
    -- Only a SHA-256 of an API key is kept (source: indexed apikey).
    api_key_hash     bytea       UNIQUE,
    is_admin         boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    last_activity_at timestamptz
);
CREATE UNIQUE INDEX user_account_email_key ON cloud.user_account (lower(email));
-- Prefix search by name or email (GET /v1/users?q=).
CREATE INDEX user_account_email_prefix_idx ON cloud.user_account (lower(email) text_pattern_ops);
CREATE INDEX user_account_first_name_idx ON cloud.user_account (lower(first_name) text_pattern_ops);
CREATE INDEX user_account_last_name_idx ON cloud.user_account (lower(last_name) text_pattern_ops);

-- Applications (modules) whose roles scope what users may do; `messenger` is one.
CREATE TABLE cloud.app (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code       text        NOT NULL UNIQUE CHECK (code ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cloud.role (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id     integer     NOT NULL REFERENCES cloud.app (id) ON DELETE CASCADE,
    code       text        NOT NULL CHECK (code ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    name       text        NOT NULL,
    -- Orders hierarchical roles: a higher rank includes every lower one of the same app.
    rank       integer     NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (app_id, code)
);
CREATE INDEX role_code_idx ON cloud.role (code);

CREATE TABLE cloud.user_account_to_role (
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    role_id         integer     NOT NULL REFERENCES cloud.role (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_account_id, role_id)
);
CREATE INDEX user_account_to_role_role_idx ON cloud.user_account_to_role (role_id);

CREATE TABLE cloud.user_group (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_group_name_key ON cloud.user_group (lower(name));

CREATE TABLE cloud.user_account_to_user_group (
    user_group_id   bigint      NOT NULL REFERENCES cloud.user_group (id) ON DELETE CASCADE,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_group_id, user_account_id)
);
CREATE INDEX user_account_to_user_group_user_idx ON cloud.user_account_to_user_group (user_account_id);

-- A client installation that logged in (GET /v1/devices).
CREATE TABLE cloud.device (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    platform        text        NOT NULL CHECK (platform IN ('ios', 'android', 'web', 'other')),
    name            text        CHECK (length(name) <= 200),
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_seen_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX device_user_account_idx ON cloud.device (user_account_id);

-- A login: access and refresh tokens are kept only as SHA-256 hashes.
CREATE TABLE cloud.session (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_account_id    bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    device_id          bigint      REFERENCES cloud.device (id) ON DELETE CASCADE,
    access_token_hash  bytea       NOT NULL UNIQUE,
    access_expires_at  timestamptz NOT NULL,
    refresh_token_hash bytea       NOT NULL UNIQUE,
    refresh_expires_at timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    last_used_at       timestamptz NOT NULL DEFAULT now(),
    revoked_at         timestamptz
);
CREATE INDEX session_user_account_idx ON cloud.session (user_account_id);
CREATE INDEX session_device_idx ON cloud.session (device_id);

-- Refresh tokens already rotated away: presenting one again revokes its session.
CREATE TABLE cloud.spent_refresh_token (
    token_hash bytea       PRIMARY KEY,
    session_id bigint      NOT NULL REFERENCES cloud.session (id) ON DELETE CASCADE,
    spent_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX spent_refresh_token_session_idx ON cloud.spent_refresh_token (session_id);

-- One MQTT client id per login per device (source: user_account_mqtt_client_id).
CREATE TABLE cloud.user_account_mqtt_client_id (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    device_id       bigint      REFERENCES cloud.device (id) ON DELETE CASCADE,
    session_id      bigint      REFERENCES cloud.session (id) ON DELETE CASCADE,
    client_id       text        NOT NULL UNIQUE CHECK (length(client_id) BETWEEN 1 AND 64),
    created_at      timestamptz NOT NULL DEFAULT now(),
    revoked_at      timestamptz
);
CREATE INDEX user_account_mqtt_client_id_user_idx ON cloud.user_account_mqtt_client_id (user_account_id);
CREATE INDEX user_account_mqtt_client_id_device_idx ON cloud.user_account_mqtt_client_id (device_id);
CREATE INDEX user_account_mqtt_client_id_session_idx ON cloud.user_account_mqtt_client_id (session_id);

-- Uploaded files; `submitted` once a message carries them (unsubmitted ones expire).
CREATE TABLE cloud.file (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uploaded_by_id  bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    name            text        NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    extension       text        NOT NULL CHECK (length(extension) <= 16),
    size            bigint      NOT NULL CHECK (size >= 0),
    mime_type       text        NOT NULL CHECK (length(mime_type) <= 127),
    checksum        bytea       NOT NULL CHECK (length(checksum) = 32),
    protected       boolean     NOT NULL DEFAULT true,
    submitted       boolean     NOT NULL DEFAULT false,
    storage_key     text        NOT NULL UNIQUE,
    width           integer,
    height          integer,
    duration_ms     bigint,
    thumbnail_small_key text,
    thumbnail_large_key text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX file_uploaded_by_idx ON cloud.file (uploaded_by_id);
CREATE INDEX file_checksum_idx ON cloud.file (checksum);
CREATE INDEX file_created_at_idx ON cloud.file (created_at);
-- The orphan sweep looks only at files never attached to anything.
CREATE INDEX file_unsubmitted_idx ON cloud.file (created_at) WHERE NOT submitted;
