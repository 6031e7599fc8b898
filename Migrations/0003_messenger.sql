-- Rooms, messages, the three ways of membership, read markers (source §4.3.1 "messenger").
CREATE SCHEMA messenger;

CREATE TABLE messenger.chat_room (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Unguessable, used on MQTT topics instead of the primary key.
    uid             text        NOT NULL UNIQUE CHECK (uid ~ '^[A-Za-z0-9_-]{16,64}$'),
    type            text        NOT NULL CHECK (type IN ('twoparty', 'multiparty')),
    name            text        CHECK (length(name) <= 200),
    topic           text        NOT NULL UNIQUE,
    created_by_id   bigint      REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    last_message_at timestamptz,
    -- The last `seq` handed out; incremented under the row lock when a message is stored.
    last_seq        bigint      NOT NULL DEFAULT 0,
    -- A two-party room's pair, smaller id first: the unique index below makes it one per pair.
    twoparty_low_user_id  bigint REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    twoparty_high_user_id bigint REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    CHECK (type <> 'twoparty' OR twoparty_low_user_id < twoparty_high_user_id)
);
CREATE UNIQUE INDEX chat_room_twoparty_pair_key
    ON messenger.chat_room (twoparty_low_user_id, twoparty_high_user_id) WHERE type = 'twoparty';
CREATE INDEX chat_room_twoparty_high_idx ON messenger.chat_room (twoparty_high_user_id);
CREATE INDEX chat_room_type_idx ON messenger.chat_room (type);
CREATE INDEX chat_room_name_idx ON messenger.chat_room (lower(name) text_pattern_ops);
CREATE INDEX chat_room_created_at_idx ON messenger.chat_room (created_at);
CREATE INDEX chat_room_last_message_at_idx ON messenger.chat_room (last_message_at DESC NULLS LAST);
-- Room lists are ordered by latest activity.
CREATE INDEX chat_room_activity_idx
    ON messenger.chat_room ((coalesce(last_message_at, created_at)) DESC, id DESC);
CREATE INDEX chat_room_updated_at_idx ON messenger.chat_room (updated_at);
CREATE INDEX chat_room_created_by_idx ON messenger.chat_room (created_by_id);

CREATE TABLE messenger.message (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_room_id bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    -- Per-room sequence, gap-free in commit order.
    seq         bigint      NOT NULL CHECK (seq > 0),
    sent_by_id  bigint      REFERENCES cloud.user_account (id) ON DELETE SET NULL,
    -- The client's id for the message; a retry with the same uid is stored once.
    uid         text        NOT NULL CHECK (length(uid) BETWEEN 1 AND 64),
    content     text        NOT NULL CHECK (length(content) <= 20000),
    file_id     bigint      REFERENCES cloud.file (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chat_room_id, seq),
    UNIQUE (chat_room_id, sent_by_id, uid)
);
CREATE INDEX message_sent_by_idx ON messenger.message (sent_by_id);
CREATE INDEX message_file_idx ON messenger.message (file_id) WHERE file_id IS NOT NULL;
CREATE INDEX message_room_created_at_idx ON messenger.message (chat_room_id, created_at);

-- Direct membership with a role of the messenger app.
CREATE TABLE messenger.chat_room_to_user_account (
    chat_room_id    bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    role_id         integer     NOT NULL REFERENCES cloud.role (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_room_id, user_account_id)
);
CREATE INDEX chat_room_to_user_account_user_idx ON messenger.chat_room_to_user_account (user_account_id);
CREATE INDEX chat_room_to_user_account_role_idx ON messenger.chat_room_to_user_account (role_id);

-- Membership through a group: every member of the group has `role_id` in the room.
CREATE TABLE messenger.chat_room_to_user_group (
    chat_room_id  bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_group_id bigint      NOT NULL REFERENCES cloud.user_group (id) ON DELETE CASCADE,
    role_id       integer     NOT NULL REFERENCES cloud.role (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_room_id, user_group_id)
);
CREATE INDEX chat_room_to_user_group_group_idx ON messenger.chat_room_to_user_group (user_group_id);
CREATE INDEX chat_room_to_user_group_role_idx ON messenger.chat_room_to_user_group (role_id);

-- Membership through an application role (source §5.1: every "foreman" in every order room).
CREATE TABLE messenger.chat_room_to_app_role (
    chat_room_id bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    app_role_id  integer     NOT NULL REFERENCES cloud.role (id) ON DELETE CASCADE,
    role_id      integer     NOT NULL REFERENCES cloud.role (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_room_id, app_role_id)
);
CREATE INDEX chat_room_to_app_role_app_role_idx ON messenger.chat_room_to_app_role (app_role_id);
CREATE INDEX chat_room_to_app_role_role_idx ON messenger.chat_room_to_app_role (role_id);

-- How far each user has read in each room; moves forward only.
CREATE TABLE messenger.read_marker (
    chat_room_id    bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    message_id      bigint      NOT NULL REFERENCES messenger.message (id) ON DELETE CASCADE,
    seq             bigint      NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_room_id, user_account_id)
);
CREATE INDEX read_marker_user_idx ON messenger.read_marker (user_account_id);
CREATE INDEX read_marker_message_idx ON messenger.read_marker (message_id);
