"""The MQTT surface's phases (mqtt.py runs them): chat-in cases and replays, presence,
forbidden subscriptions, raw packets, a large message in the outbox, and the history check
that ends each."""
import collections
import json
import time

import common
import mqtt_cases
import mqtt_raw
from mqtt_cases import Case

# Small messages sent behind the largest one: more than one relay batch (100 events).
PROBES = 120


def payload_uid(payload):
    """data.uid of a payload that decodes, to match the answers to it."""
    try:
        uid = json.loads(payload)["data"]["uid"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return uid if isinstance(uid, str) else None


def judged(case, outcome):
    if case.expect == "reject":
        return outcome.startswith(("rejected", "refused", "closed"))
    if case.expect == "refuse":
        return outcome.startswith(("refused", "closed"))
    if case.expect == "too-large":
        return outcome == "rejected too-large"
    if case.expect == "accept":
        return outcome == "accepted"
    return outcome != "silent"


def describe(case, topic=None):
    payload = case.payload
    shown = payload[:120].decode("utf-8", "backslashreplace") + (f"... ({len(payload)} bytes)" if len(payload) > 120
                                                                  else "")
    topic = case.topic if case.topic is not None else topic
    if isinstance(topic, bytes):
        topic = topic.decode("utf-8", "backslashreplace")
    topic = topic if len(topic) <= 80 else topic[:60] + f"... ({len(topic)} chars)"
    extras = []
    if case.qos != 1:
        extras.append(f"QoS {case.qos}")
    if case.retain:
        extras.append("retained")
    if case.user_properties:
        extras.append(f"user properties {case.user_properties}")
    return f"PUBLISH {topic.encode('unicode_escape').decode()}{' ' + ', '.join(extras) if extras else ''}: {shown}"


def chat_in_phase(fuzzer, cases, result, accepted, raw_account, stack):
    for case in cases:
        result.cases += 1
        if case.raw:
            outcome, event = raw_publish(stack, raw_account, case), None
        else:
            outcome, event = fuzzer.send(case)
        result.outcomes.append([case.name, outcome] + ([common.printable(case.payload[:300].decode("utf-8", "backslashreplace"))]
                                                       if case.expect == "any" else []))
        if outcome == "rejected unavailable":
            result.server_errors += 1  # the server failed, as a 5xx would
        if outcome == "accepted" and event and event["type"] == "new-message-notification":
            accepted[event["data"]["uid"]] = event["data"]
            if case.user_properties and event["data"].get("sentById") != fuzzer.account.id:
                result.fail(case.name, describe(case, fuzzer.room["uid"]), f"stored as sent by {fuzzer.account.id}",
                            f"stored as sent by {event['data'].get('sentById')}")
        if not judged(case, outcome):
            result.fail(f"chat-in: {case.name}", describe(case, f"chat-in/{fuzzer.room['uid']}"), case.expect,
                        outcome + (f" {json.dumps(event)[:300]}" if event else ""), case.known_bug)


def raw_publish(stack, account, case):
    """A chat-in case over its own raw connection: paho will not send such topics."""
    try:
        connection = mqtt_raw.session(stack.mqtt_host, stack.mqtt_port, account)
    except (OSError, RuntimeError) as error:
        return f"could not connect: {error}"
    try:
        topic = case.topic if isinstance(case.topic, bytes) else case.topic.encode()
        connection.send(mqtt_raw.publish(topic, case.payload, qos=1, packet_id=7))
        return mqtt_raw.outcome(connection)
    finally:
        connection.close()


def replay_phase(fuzzer, result, accepted):
    """The same uid again is a retry: answered with the stored message, never stored twice;
    a retry with other content keeps the first."""
    room = fuzzer.room
    first = Case("replay", mqtt_cases.dump(mqtt_cases.envelope(room["id"], "replay-1", content="the original")))
    again = Case("replay with other content",
                 mqtt_cases.dump(mqtt_cases.envelope(room["id"], "replay-1", content="a forgery")))
    ids = []
    for case in (first, first, first, again):
        result.cases += 1
        outcome, event = fuzzer.send(case)
        ids.append(event["data"]["id"] if outcome == "accepted" and event else outcome)
    if len(set(ids)) != 1 or not isinstance(ids[0], int):
        result.fail("chat-in: replays of uid replay-1", "the same new message 3 times, then with other content",
                    "each answered with the same stored message", f"answers: {ids}")
    elif isinstance(ids[0], int):
        accepted["replay-1"] = {"content": "the original", "id": ids[0]}


def contract_presence(payload):
    """Whether a delivered presence is the contract's shape, built by the broker: only the
    client's `online` claim survives, `lastActivity` is the broker's time."""
    try:
        envelope = json.loads(payload)
    except ValueError:
        return False
    data = envelope.get("data") if isinstance(envelope, dict) else None
    return (envelope.get("type") == "online-user-message" and isinstance(data, dict)
            and set(data) == {"lastActivity", "online"} and isinstance(data["online"], bool)
            and not data["lastActivity"].startswith("2026-01-01") and "<" not in data["lastActivity"])


def presence_phase(stack, presence_account, observer, result):
    """Each presence publish on a fresh connection (the plugin allows one per 10 s and client,
    and a new connection resets that). A refused one is never delivered; an accepted one is
    delivered only as the broker rebuilds it (contract_presence), whatever else it held."""
    topic = f"user/{presence_account.id}/online"
    observer.subscribe(topic)
    cases = [mqtt_cases.valid_presence(presence_account.id)] + mqtt_cases.presence_cases(presence_account.id)
    for case in cases:
        result.cases += 1
        before = len(observer.messages_on(topic))
        peer = common.MqttPeer(stack, presence_account, "presence").connect()
        try:
            mid = peer.publish(topic, case.payload, retain=True)
            code = peer.puback(mid, 3)
            seen = observer.wait(lambda: len(observer.messages_on(topic)) > before, 1.0)
        finally:
            peer.close()
        delivered = observer.messages_on(topic)[before:]
        refused = code is not None and code >= 0x80
        outcome = f"PUBACK {'none' if code is None else f'0x{code:02x}'}, {'delivered' if seen else 'not delivered'}"
        result.outcomes.append([f"presence: {case.name}", outcome])
        # The connection's end publishes the plugin's own offline presence: in the contract's shape too.
        if any(not contract_presence(payload) for payload in delivered):
            result.fail(f"presence: {case.name}", describe(case), "only the contract's shape delivered",
                        f"{outcome}: {delivered[0][:120]!r}", case.known_bug)
        elif case.expect == "accept" and (refused or not seen):
            result.fail(f"presence: {case.name}", describe(case), "accepted and delivered in the contract's shape",
                        outcome, case.known_bug)
        elif case.expect == "refuse" and not refused:
            result.fail(f"presence: {case.name}", describe(case), "refused (PUBACK >= 0x80)", outcome,
                        case.known_bug)


def subscription_phase(fuzzer, other_room, victim_id, result):
    for topic in mqtt_cases.subscription_filters(other_room["uid"], victim_id):
        result.cases += 1
        codes = fuzzer.peer.subscribe(topic)
        result.outcomes.append([f"subscribe {topic}", f"SUBACK {codes}"])
        if not codes or any(code < 0x80 for code in codes):
            result.fail(f"subscribe {topic}", f"SUBSCRIBE {topic}", "SUBACK >= 0x80", f"SUBACK {codes}")
            fuzzer.peer.client.unsubscribe(topic)


def raw_phase(stack, account, other, room_uid, result, garbage, seed, timeout):
    """Malformed packets over plain sockets; see mqtt_cases.raw_*."""
    host, port = stack.mqtt_host, stack.mqtt_port
    def attempt(label, connection, data, expect):
        """Sends one malformed packet and records what the broker did with it."""
        try:
            connection.send(data)
            outcome = mqtt_raw.outcome(connection, timeout)
        finally:
            connection.close()
        result.outcomes.append([label, outcome])
        if expect == "refuse" and not outcome.startswith(("closed", "refused")):
            result.fail(label, data[:80].hex(), "refused or closed", outcome)

    for name, data, expect in mqtt_cases.raw_unauthenticated(account, other):
        result.cases += 1
        attempt(f"raw MQTT: {name}", mqtt_raw.Connection(host, port), data, expect)
    for name, data, expect in mqtt_cases.raw_authenticated(room_uid):
        result.cases += 1
        try:
            connection = mqtt_raw.session(host, port, account)
        except (OSError, RuntimeError) as error:
            result.fail(f"raw MQTT: {name}", "CONNECT", "CONNACK 0", str(error))
            continue
        attempt(f"raw MQTT after CONNECT: {name}", connection, data, expect)
    # Garbage, 50 connections at a time: nothing to expect but a broker that survives.
    packets = mqtt_cases.garbage_packets(garbage, seed)
    for start in range(0, len(packets), 50):
        connections = []
        for data in packets[start:start + 50]:
            result.cases += 1
            connection = mqtt_raw.Connection(host, port)
            connection.send(data)
            connections.append(connection)
        time.sleep(0.3)
        for connection in connections:
            connection.close()
    # Many connections each declaring a 256 MiB packet: the broker must not reserve it.
    before = common.memory_kib(stack.pids().get("mosquitto", 0))
    held = []
    for _ in range(20):
        result.cases += 1
        connection = mqtt_raw.Connection(host, port)
        connection.send(b"\x10\xff\xff\xff\x7f" + b"\x00" * 1000)
        held.append(connection)
    time.sleep(1)
    after = common.memory_kib(stack.pids().get("mosquitto", 0))
    for connection in held:
        connection.close()
    if before and after:
        result.notes.append(f"mosquitto RSS with 20 connections declaring 256 MiB packets: "
                            f"{common.mib(before['rss'])} -> {common.mib(after['rss'])} MiB")
        if after["rss"] - before["rss"] > 256 * 1024:
            result.fail("raw MQTT: 20 connections declaring 256 MiB packets", "10 ff ff ff 7f + 1000 bytes, x20",
                        "mosquitto's memory to stay bounded (< +256 MiB)",
                        f"RSS {common.mib(before['rss'])} -> {common.mib(after['rss'])} MiB")


def outbox_phase(fuzzer, accounts, sender, pair, room, result, accepted):
    """The largest valid message, then a burst of PROBES small messages in another room:
    every one must arrive within 8 s, once. The relay publishes up to 100 events a batch, so
    a burst larger than that also shows a relay stuck behind one event it cannot publish.
    The big message is deleted afterwards (as its sender, over REST) whatever happened: its
    event then shrinks to a tombstone's, so a stuck relay moves on and the stack stays usable
    for what runs next."""
    case = mqtt_cases.largest_message(room)
    outcome, event = fuzzer.send(case)
    peer_a, peer_b, pair_room = pair
    probes = [f"probe-{n}" for n in range(PROBES)]
    for uid in probes:
        peer_a.publish(f"chat-in/{pair_room['uid']}", mqtt_cases.dump(mqtt_cases.envelope(pair_room["id"], uid)))
    result.cases += 1 + len(probes)
    topic = f"chat-room/{pair_room['uid']}"

    def copies():
        counts = collections.Counter(e["data"].get("uid") for e in common.events(peer_b.messages_on(topic)))
        return {uid: counts[uid] for uid in probes}

    delivered = peer_b.wait(lambda: all(copies().values()), 8)
    stuck = copies()
    stored = next((m for m in accounts.history(sender, room["id"]) if m["uid"] == case_uid(case)), None)
    if stored:
        accepted[stored["uid"]] = stored
        common.check(accounts.http.delete(f"/v1/rooms/{room['id']}/messages/{stored['id']}", headers=sender.auth),
                     204)
    if not judged(case, outcome):
        result.fail(f"chat-in: {case.name}", describe(case, f"chat-in/{room['uid']}"), "stored and announced",
                    outcome + (" (stored)" if stored else " (not stored)"))
    duplicated = sum(1 for n in stuck.values() if n > 1)
    if not delivered or duplicated:
        late = peer_b.wait(lambda: all(copies().values()), 10)
        big = describe(case, f"chat-in/{room['uid']}")[:90]
        result.fail("room events after a 64 KiB message",
                    f"{big}..., then {PROBES} small messages to chat-in/{pair_room['uid']} (another room)",
                    f"all {PROBES} delivered within 8 s, once each",
                    f"{sum(1 for n in stuck.values() if n)} of {PROBES} delivered in 8 s, {duplicated} of them "
                    f"more than once (up to {max(stuck.values())} copies); "
                    + ("all delivered once the big message was deleted" if late else
                       "still missing 10 s after the big message was deleted") + " (see the worker log)")


def case_uid(case):
    return payload_uid(case.payload)


def verify_history(accounts, account, room, allowed, result, what):
    """The room holds exactly the messages that were announced: nothing bad was stored."""
    stored = accounts.history(account, room["id"])
    uids = [m["uid"] for m in stored]
    for message in stored:
        if message["uid"] not in allowed:
            result.fail(f"{what}: a message stored without being announced", f"uid {message['uid']!r}",
                        "only announced messages stored", json.dumps(message)[:300])
    for uid in allowed:
        if uids.count(uid) != 1:
            result.fail(f"{what}: an announced message stored {uids.count(uid)} times", f"uid {uid!r}",
                        "stored once", f"{uids.count(uid)} copies")
    replay = next((m for m in stored if m["uid"] == "replay-1"), None)
    if replay and replay["content"] != "the original":
        result.fail("replay with other content", "uid replay-1", "content 'the original'", replay["content"])
