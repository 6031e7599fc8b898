-- Who has a push token changes rarely; messages come all the time. Every insert or delete of
-- a push token, and every move of one to another user, moves this version forward in its
-- own transaction. The outbox relay reads it with each new message, so the fan-out can keep
-- which users have no token and, in a room where nobody has one, ask PostgreSQL nothing:
-- a token registered later commits a higher version, and the next message carries it.
CREATE TABLE notifications.push_token_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  bigint  NOT NULL DEFAULT 0
);
INSERT INTO notifications.push_token_version DEFAULT VALUES;

CREATE FUNCTION notifications.push_tokens_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE notifications.push_token_version SET version = version + 1;
    RETURN NULL;
END
$$;

-- A new token for the same device (an UPDATE of `token`) changes nobody's having one.
CREATE TRIGGER push_tokens_changed AFTER INSERT OR DELETE ON notifications.user_push_token
    FOR EACH ROW EXECUTE FUNCTION notifications.push_tokens_changed();
CREATE TRIGGER push_token_moved AFTER UPDATE OF user_account_id ON notifications.user_push_token
    FOR EACH ROW EXECUTE FUNCTION notifications.push_tokens_changed();
