-- The outbox records domain events (ParleyCore's DomainEvent): `kind` is the event's name and
-- `event` its payload, and the relay decides where each goes. Rows without a kind were recorded
-- by a server before this migration, with their MQTT event, fan-out job and topic as they go out:
-- the relay still delivers those as they are.
ALTER TABLE messenger.outbox ADD COLUMN kind text;
-- An account's events (blocks, ended sessions) concern no room and name no topic.
ALTER TABLE messenger.outbox DROP CONSTRAINT outbox_room_or_topic;
ALTER TABLE messenger.outbox ADD CONSTRAINT outbox_room_or_topic
    CHECK (chat_room_id IS NOT NULL OR topic IS NOT NULL OR kind IS NOT NULL);
