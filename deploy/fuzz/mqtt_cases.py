"""The hostile MQTT inputs of deploy/fuzz/mqtt.py, as data.

A Case is one publish and what must become of it:
  reject     message-rejected on the sender's notification topic, or a refusal by the broker
             (PUBACK reason >= 0x80, or the connection closed)
  refuse     the broker refuses it (never reaches the ingest)
  too-large  message-rejected with code too-large
  accept     stored and announced on the room's topic (a boundary that is valid)
  any        anything but silence: a mutation may stay valid
"""
import dataclasses
import json
import random

from mqtt_raw import AUTH, CONNECT, PUBLISH, PUBREL, SUBSCRIBE, connect, packet, publish, string, subscribe, varint

LIMIT = 64 * 1024


@dataclasses.dataclass
class Case:
    name: str
    payload: bytes
    topic: str = None            # default: chat-in/<the fuzzer's room>
    expect: str = "reject"
    known_bug: bool = False
    qos: int = 1
    retain: bool = False
    user_properties: list = None
    raw: bool = False            # sent over mqtt_raw (paho refuses such topics)


def envelope(room_id, uid, content="fuzz", kind="new-message-notification", **data):
    return {"type": kind, "data": {"chatRoomId": room_id, "content": content, "uid": uid, **data},
            "hash": f"h-{str(uid)[:40]}"}


def dump(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def padded(room_id, uid, total):
    """A valid new message of exactly `total` bytes: content of 4-byte emoji (so within the
    20,000 code point limit) and ASCII to finish."""
    base = len(dump(envelope(room_id, uid, content="")))
    emoji, ascii_rest = divmod(total - base, 4)
    payload = dump(envelope(room_id, uid, content="\U0001F600" * emoji + "a" * ascii_rest))
    assert len(payload) == total, (len(payload), total)
    return payload


def chat_in_cases(room, other_room, victim_id):
    """room: the fuzzer's multiparty room; other_room: one it is not in; victim_id: a user
    whose identity forged publishes claim."""
    r = room["id"]
    uid = iter(f"mqtt-bad-{n}" for n in range(10_000))
    e = lambda **kw: dump(envelope(r, next(uid), **kw))  # noqa: E731
    deep_object = b'{"type":"new-message-notification","data":' + b'{"a":' * 10000 + b"1" + b"}" * 10000 + \
        b',"hash":"deep"}'
    deep_array = b'{"type":"new-message-notification","data":{"chatRoomId":%d,"content":"x","uid":"deep",' \
                 b'"mentions":' % r + b"[" * 10000 + b"]" * 10000 + b'},"hash":"deep"}'
    wide = {"type": "new-message-notification", "data": {f"k{i}": i for i in range(5000)}, "hash": "wide"}
    cases = [
        Case("invalid UTF-8 payload", b"\xff\xfe\xfd\xfc"),
        Case("invalid UTF-8 inside a JSON string", b'{"type":"new-message-notification","data":{"chatRoomId":%d,'
             b'"content":"\xff\xc0","uid":"utf8-1"},"hash":"h"}' % r),
        Case("overlong UTF-8 encoding of '/'", b'{"type":"new-message-notification","data":{"chatRoomId":%d,'
             b'"content":"\xc0\xaf","uid":"utf8-2"},"hash":"h"}' % r),
        Case("lone UTF-16 surrogate escape", b'{"type":"new-message-notification","data":{"chatRoomId":%d,'
             b'"content":"\\ud800","uid":"utf8-3"},"hash":"h"}' % r),
        Case("NUL in content", e(content="a\u0000b")),
        Case("empty payload", b""),
        Case("not JSON", b"hello world"),
        Case("JSON array", b"[]"),
        Case("JSON string", b'"new-message-notification"'),
        Case("JSON null", b"null"),
        Case("JSON number", b"42"),
        Case("truncated JSON", e()[:-7]),
        Case("trailing garbage after JSON", e() + b"}}garbage"),
        Case("10,000 nested objects", deep_object),
        Case("10,000 nested arrays", deep_array),
        Case("5,000 unknown keys", dump(wide)),
        Case("10,000 mentions", e(mentions=list(range(1, 10_001)))),
        Case("51 mentions", e(mentions=list(range(1, 52)))),
        Case("mentions of a user not in the room", e(mentions=[victim_id + 100_000])),
        Case("type is a number", dump({"type": 5, "data": envelope(r, "t1")["data"], "hash": "h"})),
        Case("data is a string", dump({"type": "new-message-notification", "data": "x", "hash": "h"})),
        Case("data is null", dump({"type": "new-message-notification", "data": None, "hash": "h"})),
        Case("no data", dump({"type": "new-message-notification", "hash": "h"})),
        Case("no type", dump({"data": envelope(r, "t2")["data"], "hash": "h"})),
        Case("chatRoomId is a string", dump(envelope("abc", "w1"))),
        Case("chatRoomId is a float", dump(envelope(1.5, "w2"))),
        Case("chatRoomId beyond Int64", b'{"type":"new-message-notification","data":{"chatRoomId":'
             b'99999999999999999999999,"content":"x","uid":"w3"},"hash":"h"}'),
        Case("chatRoomId 1e400", b'{"type":"new-message-notification","data":{"chatRoomId":1e400,'
             b'"content":"x","uid":"w4"},"hash":"h"}'),
        Case("chatRoomId of a room the user is not in", dump(envelope(other_room["id"], "w5"))),
        Case("content is a number", e(content=123)),
        Case("content is null", e(content=None)),
        Case("content is an array", e(content=["a"])),
        Case("content of 20,001 characters", e(content="a" * 20001)),
        Case("empty content and no file", e(content="")),
        Case("uid is a number", dump(envelope(r, 5))),
        Case("empty uid", dump(envelope(r, ""))),
        Case("uid of 65 characters", dump(envelope(r, "u" * 65))),
        Case("enormous uid (60,000 characters)", dump(envelope(r, "u" * 60_000))),
        Case("uid with control characters", dump(envelope(r, "a\u0001\u001b[2Jb"))),
        Case("hash of 129 characters", dump({**envelope(r, "w6"), "hash": "h" * 129})),
        Case("enormous hash (60,000 characters)", dump({**envelope(r, "w7"), "hash": "h" * 60_000})),
        Case("hash is an object", dump({**envelope(r, "w8"), "hash": {"a": 1}})),
        Case("fileId is a string", e(fileId="x")),
        Case("fileId of no such file", e(fileId=2**62)),
        Case("replyToId is a string", e(replyToId="x")),
        Case("replyToId of no such message", e(replyToId=2**62)),
        Case("mentions is a string", e(mentions="1,2")),
        Case("mentions of floats", e(mentions=[1.5])),
        Case("unknown type", dump(envelope(r, "k1", kind="delete-everything"))),
        Case("empty type", dump(envelope(r, "k2", kind=""))),
        Case("server-only type message-rejected", dump(envelope(r, "k3", kind="message-rejected"))),
        Case("server-only type chatroom-change-notification",
             dump(envelope(r, "k4", kind="chatroom-change-notification"))),
        Case("presence type on chat-in", dump(envelope(r, "k5", kind="online-user-message"))),
        Case("read marker with both messageId and seq",
             dump({"type": "read-message-notification", "data": {"chatRoomId": r, "messageId": 1, "seq": 1},
                   "hash": "h"})),
        Case("read marker with neither", dump({"type": "read-message-notification", "data": {"chatRoomId": r},
                                               "hash": "h"})),
        Case("read marker of no such message",
             dump({"type": "read-message-notification", "data": {"chatRoomId": r, "messageId": 2**62},
                   "hash": "h"})),
        Case("typing with creating a string",
             dump({"type": "creating-message-info", "data": {"chatRoomId": r, "creating": "yes",
                                                             "time": "2026-01-01T00:00:00.000Z"}, "hash": "h"})),
        Case("typing with a time that is not a time",
             dump({"type": "creating-message-info", "data": {"chatRoomId": r, "creating": True,
                                                             "time": "not a time"}, "hash": "h"})),
        Case("invalid message with QoS 0", b"not json either", qos=0),
        Case("invalid message with QoS 2", b"not json at all", qos=2),
        Case("invalid message retained", b"retained garbage", retain=True),
        Case("payload of 64 KiB + 1 byte", padded(r, "too-large-1", LIMIT + 1), expect="too-large"),
        # Above the broker's own limit (twice the ingest's): the broker refuses it.
        Case("payload of 1 MiB", b'{"type":"new-message-notification","data":{"content":"' + b"a" * (1 << 20) +
             b'"},"hash":"h"}', expect="refuse"),
        # Boundaries that are valid: they must be stored.
        Case("content of 20,000 characters", dump(envelope(r, "limit-20000", content="a" * 20000)), expect="accept"),
        # Who sent it is the broker's stamp, never the client's word.
        Case("forged parley-user claiming another user", dump(envelope(r, "forged-1")), expect="refuse",
             user_properties=[("parley-user", str(victim_id))]),
        Case("forged parley-user claiming the server", dump(envelope(r, "forged-2")), expect="refuse",
             user_properties=[("parley-user", "parley-server")]),
        Case("forged parley-user after another property", dump(envelope(r, "forged-3")), expect="refuse",
             user_properties=[("x", "y"), ("parley-user", str(victim_id))]),
        Case("Parley-User in another case (stays the sender's)", dump(envelope(r, "forged-4")), expect="accept",
             user_properties=[("Parley-User", str(victim_id))]),
        # Topics the user may not publish to.
        Case("chat-in of a room the user is not in", dump(envelope(other_room["id"], "other-1")),
             topic=f"chat-in/{other_room['uid']}", expect="refuse"),
        Case("chat-in of no room", dump(envelope(r, "none-1")), topic="chat-in/AAAAAAAAAAAAAAAAAAAAAA",
             expect="reject"),
        Case("chat-in without a uid", dump(envelope(r, "none-2")), topic="chat-in/", expect="reject"),
        Case("chat-in with a deeper topic", dump(envelope(r, "none-3")), topic=f"chat-in/{room['uid']}/x",
             expect="reject"),
        Case("the room topic itself", dump(envelope(r, "room-1")), topic=f"chat-room/{room['uid']}",
             expect="refuse"),
        Case("another user's notification topic", dump({"type": "message-rejected", "data": {}, "hash": "h"}),
             topic=f"messenger-notifications/{victim_id}", expect="refuse"),
        Case("$CONTROL kicking every client", b'{"kickClients":["*"],"revokeSessions":["1","2","3"]}',
             topic="$CONTROL/parley-auth/v1", expect="refuse"),
        Case("$CONTROL invalidating decisions", b'{"invalidate":["%d chat-room/x"]}' % victim_id,
             topic="$CONTROL/parley-auth/v1", expect="refuse"),
        Case("$CONTROL of the dynamic-security plugin", b'{"commands":[{"command":"listClients"}]}',
             topic="$CONTROL/dynamic-security/v1", expect="refuse"),
        Case("$SYS topic", b"0", topic="$SYS/broker/clients/connected", expect="refuse"),
        Case("topic with +", dump(envelope(r, "wild-1")), topic="chat-in/+", expect="refuse", raw=True),
        Case("topic with #", dump(envelope(r, "wild-2")), topic="chat-in/#", expect="refuse", raw=True),
        Case("topic with NUL", dump(envelope(r, "nul-1")), topic=f"chat-in/{room['uid']}\x00x", expect="refuse",
             raw=True),
        Case("topic of 64 KiB", dump(envelope(r, "long-1")), topic="chat-in/" + "a" * (65535 - 8), expect="refuse",
             raw=True),
        Case("topic with invalid UTF-8", dump(envelope(r, "utf8-topic")), topic=b"chat-in/\xff\xfe", expect="refuse",
             raw=True),
    ]
    return cases


def largest_message(room):
    """The largest valid new message (64 KiB, within the content limit of 20,000 code points):
    it must be stored, and its event (larger still) must not stop the room events behind it."""
    return Case("payload of exactly 64 KiB", padded(room["id"], "limit-64k", LIMIT), expect="accept")


def presence_cases(user_id):
    """Presence publishes (retained, as clients publish it): refused, or (a client's claim of
    lastActivity) accepted and rebuilt by the broker in the contract's shape."""
    topic = f"user/{user_id}/online"
    good = {"type": "online-user-message", "data": {"lastActivity": "2026-01-01T00:00:00.000Z", "online": True},
            "hash": "h"}
    return [
        Case("presence that is not JSON", b"online", topic=topic, retain=True, expect="refuse"),
        Case("presence of invalid UTF-8", b"\xff\xfe\xfd", topic=topic, retain=True, expect="refuse"),
        Case("presence of 60 KB", dump({**good, "hash": "h" * 60_000}), topic=topic, retain=True, expect="refuse"),
        Case("presence with online a string", dump({**good, "data": {**good["data"], "online": "yes"}}),
             topic=topic, retain=True, expect="refuse"),
        Case("presence of another type", dump({**good, "type": "new-message-notification"}), topic=topic,
             retain=True, expect="refuse"),
        Case("presence with a script in lastActivity",
             dump({**good, "data": {"lastActivity": "<script>alert(1)</script>", "online": True}}), topic=topic,
             retain=True, expect="accept"),
    ]


def valid_presence(user_id):
    payload = {"type": "online-user-message", "data": {"lastActivity": "2026-01-01T00:00:00.000Z", "online": True},
               "hash": "fuzz-valid-presence"}
    return Case("valid presence (control)", dump(payload), topic=f"user/{user_id}/online", retain=True,
                expect="accept")


def subscription_filters(room_uid_not_member, other_user_id):
    """Filters a user must not be granted: each SUBACK must refuse (reason >= 0x80)."""
    return ["#", "+", "$SYS/#", "$CONTROL/#", "chat-room/+", "chat-in/+", "chat-in/#",
            "$share/parley-ingest/chat-in/+", "$share/x/#", f"messenger-notifications/{other_user_id}",
            "messenger-notifications/+", f"chat-room/{room_uid_not_member}", "user/+/online/#", "user/#"]


def mutations(room, count, seed):
    """Seeded random damage to a valid envelope: a field replaced by a value of another type,
    bytes flipped, cut or inserted. Any outcome but silence is fine. Each mutation has a
    random generator of its own, so mutation n is the same whatever came before it."""
    values = [None, True, 0, -1, 2**63, -2**63 - 1, 1.5, "", "x" * 300, [], [1, "a", None], {}, {"a": {"b": []}},
              "\u202e\u0000\ud7ff", "😀" * 50]
    out = []
    for n in range(count):
        rng = random.Random(f"{seed}-mutation-{n}")
        doc = envelope(room["id"], f"mut-{n}", content=f"mutation {n}")
        choice = rng.randrange(5)
        if choice == 0:
            key = rng.choice(["chatRoomId", "content", "uid", "fileId", "replyToId", "mentions"])
            doc["data"][key] = rng.choice(values)
            payload = dump(doc)
        elif choice == 1:
            doc[rng.choice(["type", "data", "hash"])] = rng.choice(values)
            payload = dump(doc)
        elif choice == 2:
            payload = bytearray(dump(doc))
            for _ in range(rng.randint(1, 8)):
                payload[rng.randrange(len(payload))] = rng.randrange(256)
            payload = bytes(payload)
        elif choice == 3:
            payload = dump(doc)[: rng.randrange(1, 80)]
        else:
            raw = dump(doc)
            at = rng.randrange(len(raw))
            payload = raw[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + raw[at:]
        out.append(Case(f"mutation {n} ({['field', 'envelope', 'bytes', 'cut', 'insert'][choice]})", payload,
                        expect="any"))
    return out


def garbage_packets(count, seed):
    """Random bytes behind a random fixed header, for connections that never authenticated."""
    rng = random.Random(f"{seed}-garbage")
    out = []
    for _ in range(count):
        head = bytes([rng.randrange(256)])
        body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        length = rng.choice([len(body), rng.randrange(0, 128), len(body) + 1])
        out.append(head + varint(length) + body)
    return out



def raw_unauthenticated(account, other):
    """Packets on a fresh connection: each must be refused (the connection closed or a CONNACK
    with a failure), except where 'any' says the broker may wait for the rest."""
    mqtt = account.mqtt
    client_id, user = mqtt["clientId"], mqtt["username"]
    garbage_connect = packet(CONNECT, string(b"MQTT") + bytes([5, 0x02]) + b"\x00\x1e\xff\xff\xff\xff\x00\x00")
    return [
        ("reserved packet type 0", b"\x00\x00", "refuse"),
        ("AUTH before CONNECT", packet(AUTH, b"\x00\x00"), "refuse"),
        ("PUBLISH before CONNECT", publish("chat-in/x", b"hi", qos=0), "refuse"),
        ("SUBSCRIBE before CONNECT", subscribe("#"), "refuse"),
        ("PINGREQ before CONNECT", b"\xc0\x00", "refuse"),
        ("CONNECT with reserved fixed-header flags", bytes([0x1F]) + connect("x")[1:], "refuse"),
        ("CONNECT with the reserved connect flag", connect("x")[:11] + bytes([connect("x")[11] | 1]) +
         connect("x")[12:], "refuse"),
        ("remaining length of five bytes", b"\x10\xff\xff\xff\xff\x01", "refuse"),
        ("CONNECT of protocol MQTX", connect("x", name=b"MQTX"), "refuse"),
        ("CONNECT of protocol level 9", connect("x", level=9), "refuse"),
        ("CONNECT with garbage properties", garbage_connect, "refuse"),
        ("CONNECT without credentials", connect(client_id), "refuse"),
        ("CONNECT with a forged token", connect(client_id, user, "v1.AAAAAAAA.BBBBBBBB"), "refuse"),
        ("CONNECT with another user's token", connect(other.mqtt["clientId"], user, other.mqtt["password"]),
         "refuse"),
        ("CONNECT with its token under another client id", connect("parley-stolen", user, mqtt["password"]),
         "refuse"),
        ("CONNECT as parley-server with a wrong password", connect("x", "parley-server", "wrong"), "refuse"),
        ("CONNECT with a 65,535-byte client id", connect("c" * 65535, user, mqtt["password"]), "refuse"),
        ("CONNECT with NUL in the client id", connect(client_id + "\x00", user, mqtt["password"]), "refuse"),
        ("CONNECT with a 65,535-byte password", connect(client_id, user, "p" * 65535), "refuse"),
        ("truncated CONNECT", connect(client_id, user, mqtt["password"])[:-9], "any"),
        ("CONNECT declaring 256 MiB and sending 100 bytes", b"\x10\xff\xff\xff\x7f" + b"\x00" * 100, "any"),
    ]


def raw_authenticated(room_uid):
    """Packets after a valid CONNECT: each must get a refusal (DISCONNECT, a reason >= 0x80,
    or the connection closed); 'any' marks those with a legitimate answer."""
    topic = f"chat-in/{room_uid}"
    return [
        ("PUBLISH of QoS 3", packet(PUBLISH, string(topic) + b"\x00\x01\x00x", flags=6), "refuse"),
        ("PUBLISH whose topic length runs past the packet", packet(PUBLISH, b"\xff\xffchat-in", flags=2), "refuse"),
        ("PUBLISH with topic alias 0", publish(topic, b"{}", properties=b"\x23\x00\x00"), "refuse"),
        ("PUBLISH with an empty topic and no alias", publish("", b"{}"), "refuse"),
        ("PUBLISH with an unknown property", publish(topic, b"{}", properties=b"\x7f\x00"), "refuse"),
        ("PUBLISH with a property length past the packet", publish(topic, b"", properties=b"")[:-1] + b"\x7f",
         "refuse"),
        ("SUBSCRIBE with QoS 3", subscribe(f"chat-room/{room_uid}", options=3), "refuse"),
        ("SUBSCRIBE without a filter", packet(SUBSCRIBE, b"\x00\x01\x00", flags=2), "refuse"),
        ("a second CONNECT", connect("again"), "refuse"),
        ("PUBREL of an unknown packet id", packet(PUBREL, b"\x12\x34", flags=2), "any"),
        ("remaining length of five bytes", b"\x30\xff\xff\xff\xff\x01", "refuse"),
        ("PUBLISH declaring 256 MiB", b"\x32\xff\xff\xff\x7f" + string(topic) + b"\x00\x01\x00", "any"),
    ]
