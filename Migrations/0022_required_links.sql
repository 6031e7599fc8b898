-- Groups and application roles linked into a room are the directory's: a system administrator
-- links them, and says whether the link is `required`. A member who came through a link that
-- is not required may leave the room (messenger.room_departure, 0021): the link's path then
-- no longer makes them a member, until they accept an invitation back.
ALTER TABLE messenger.chat_room_to_user_group ADD COLUMN required boolean NOT NULL DEFAULT false;
ALTER TABLE messenger.chat_room_to_app_role ADD COLUMN required boolean NOT NULL DEFAULT false;

CREATE OR REPLACE VIEW messenger.room_membership AS
    SELECT m.chat_room_id, m.user_account_id, m.role_id, 'direct'::text AS via
    FROM messenger.chat_room_to_user_account m
    UNION ALL
    SELECT g.chat_room_id, ug.user_account_id, g.role_id, 'group:' || g.user_group_id
    FROM messenger.chat_room_to_user_group g
    JOIN cloud.user_account_to_user_group ug ON ug.user_group_id = g.user_group_id
    WHERE g.required OR NOT EXISTS (
        SELECT 1 FROM messenger.room_departure d
        WHERE d.chat_room_id = g.chat_room_id AND d.user_account_id = ug.user_account_id)
    UNION ALL
    SELECT a.chat_room_id, ur.user_account_id, a.role_id, 'app-role:' || a.app_role_id
    FROM messenger.chat_room_to_app_role a
    JOIN cloud.user_account_to_role ur ON ur.role_id = a.app_role_id
    WHERE a.required OR NOT EXISTS (
        SELECT 1 FROM messenger.room_departure d
        WHERE d.chat_room_id = a.chat_room_id AND d.user_account_id = ur.user_account_id);
