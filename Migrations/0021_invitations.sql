-- Invitations to multiparty rooms: what an add becomes for someone who left the room, or who
-- shares no room with the adder under PARLEY_ROOM_ADD_POLICY=invite. Only pending ones are
-- kept: accepting makes the membership, declining (or a block between the two) deletes it.
CREATE TABLE messenger.room_invitation (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_room_id bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    invitee_id   bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    inviter_id   bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    role_id      integer     NOT NULL REFERENCES cloud.role (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chat_room_id, invitee_id)
);
CREATE INDEX room_invitation_invitee_idx ON messenger.room_invitation (invitee_id, id);
CREATE INDEX room_invitation_inviter_idx ON messenger.room_invitation (inviter_id);
CREATE INDEX room_invitation_role_idx ON messenger.room_invitation (role_id);

-- Who left a room of their own accord: they come back only by accepting an invitation.
CREATE TABLE messenger.room_departure (
    chat_room_id    bigint      NOT NULL REFERENCES messenger.chat_room (id) ON DELETE CASCADE,
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    left_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_room_id, user_account_id)
);
CREATE INDEX room_departure_user_idx ON messenger.room_departure (user_account_id);
