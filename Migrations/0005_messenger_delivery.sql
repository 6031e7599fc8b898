-- Membership by any path in one place, and the transactional outbox of room events.

-- Every (room, user, role) a user gets, directly, through a group or through an
-- application role; a user's effective role in a room is the highest rank among their rows.
-- Each branch is served by primary keys and the indexes of 0001 and 0003.
CREATE VIEW messenger.room_membership AS
    SELECT m.chat_room_id, m.user_account_id, m.role_id, 'direct'::text AS via
    FROM messenger.chat_room_to_user_account m
    UNION ALL
    SELECT g.chat_room_id, ug.user_account_id, g.role_id, 'group:' || g.user_group_id
    FROM messenger.chat_room_to_user_group g
    JOIN cloud.user_account_to_user_group ug ON ug.user_group_id = g.user_group_id
    UNION ALL
    SELECT a.chat_room_id, ur.user_account_id, a.role_id, 'app-role:' || a.app_role_id
    FROM messenger.chat_room_to_app_role a
    JOIN cloud.user_account_to_role ur ON ur.role_id = a.app_role_id;

-- Room lists join membership by user first.
CREATE INDEX chat_room_to_user_group_group_room_idx ON messenger.chat_room_to_user_group (user_group_id, chat_room_id);
CREATE INDEX chat_room_to_app_role_role_room_idx ON messenger.chat_room_to_app_role (app_role_id, chat_room_id);
CREATE INDEX user_account_to_role_user_idx ON cloud.user_account_to_role (user_account_id, role_id);

-- Events written in the same transaction as the change they describe; a relay publishes
-- each on MQTT, queues its fan-out, then deletes it. A crash in between repeats the event
-- (clients drop duplicates by its hash) but never loses it.
CREATE TABLE messenger.outbox (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_room_id bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    -- The canonical event (envelope JSON) for chat-room/{uid}; null when only notices go out.
    event        text,
    -- The fan-out job (JSON) to queue after publishing.
    fanout       text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_room_idx ON messenger.outbox (chat_room_id);
