-- Every change to who can read a room, by any path (direct, group, application role, and
-- the group's or role's own members), moves the room's readers_version forward in the same
-- transaction. The outbox relay reads the version with each new message, so the fan-out can
-- keep a room's readers in memory and know, without a query, whether they are still right:
-- a change commits a higher version, and the next message carries it.
ALTER TABLE messenger.chat_room ADD COLUMN readers_version bigint NOT NULL DEFAULT 0;

-- Rooms are locked in id order, as a batch of sends locks them, so the two never wait for
-- each other in a cycle.
CREATE FUNCTION messenger.readers_changed(rooms bigint[]) RETURNS void LANGUAGE sql AS $$
    UPDATE messenger.chat_room c SET readers_version = c.readers_version + 1
    FROM (SELECT id FROM messenger.chat_room WHERE id = ANY(rooms) ORDER BY id FOR NO KEY UPDATE) AS locked
    WHERE c.id = locked.id
$$;

CREATE FUNCTION messenger.room_link_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM messenger.readers_changed(ARRAY[NEW.chat_room_id, OLD.chat_room_id]);
    RETURN NULL;
END
$$;

CREATE FUNCTION messenger.group_members_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM messenger.readers_changed(ARRAY(
        SELECT chat_room_id FROM messenger.chat_room_to_user_group
        WHERE user_group_id IN (NEW.user_group_id, OLD.user_group_id)));
    RETURN NULL;
END
$$;

CREATE FUNCTION messenger.role_members_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM messenger.readers_changed(ARRAY(
        SELECT chat_room_id FROM messenger.chat_room_to_app_role
        WHERE app_role_id IN (NEW.role_id, OLD.role_id)));
    RETURN NULL;
END
$$;

CREATE TRIGGER readers_changed AFTER INSERT OR UPDATE OR DELETE ON messenger.chat_room_to_user_account
    FOR EACH ROW EXECUTE FUNCTION messenger.room_link_changed();
CREATE TRIGGER readers_changed AFTER INSERT OR UPDATE OR DELETE ON messenger.chat_room_to_user_group
    FOR EACH ROW EXECUTE FUNCTION messenger.room_link_changed();
CREATE TRIGGER readers_changed AFTER INSERT OR UPDATE OR DELETE ON messenger.chat_room_to_app_role
    FOR EACH ROW EXECUTE FUNCTION messenger.room_link_changed();
CREATE TRIGGER readers_changed AFTER INSERT OR UPDATE OR DELETE ON cloud.user_account_to_user_group
    FOR EACH ROW EXECUTE FUNCTION messenger.group_members_changed();
CREATE TRIGGER readers_changed AFTER INSERT OR UPDATE OR DELETE ON cloud.user_account_to_role
    FOR EACH ROW EXECUTE FUNCTION messenger.role_members_changed();
