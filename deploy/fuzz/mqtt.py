"""The MQTT surface: every malformed shape on chat-in (mqtt_cases.py), presence, forbidden
subscriptions and raw malformed packets, while a pair of clients exchanges valid messages.

  ~/.cache/parley-fuzz-venv/bin/python deploy/fuzz/mqtt.py [--short] [--output FILE] [--seed N]

Accounts: A and B chat in their two-party room (the good traffic: every message must arrive);
F fuzzes chat-in of its multiparty room (with A, B and P) and waits for each input's fate:
message-rejected on its notification topic, a refusal by the broker (PUBACK >= 0x80, the
connection closed), or the stored message announced on the room topic. P fuzzes presence and
sends the raw packets (they need a client id of their own: a second connection with F's would
take F's over). Afterwards: serve, worker and mosquitto kept their pids, A and B were never
disconnected, and the rooms' history holds exactly the messages that were announced.
--short: the fixed cases and 30 random mutations (under a minute); full: 400 mutations and
more garbage packets.
"""
import argparse
import statistics
import sys
import threading
import time

import common
import mqtt_cases
from mqtt_phases import PROBES, chat_in_phase, outbox_phase, payload_uid, presence_phase, raw_phase, replay_phase
from mqtt_phases import subscription_phase, verify_history

ACCEPTED_EVENTS = ("new-message-notification", "read-message-notification", "creating-message-info")


class GoodTraffic(threading.Thread):
    """A and B take turns sending a valid message to their room every `interval` seconds."""

    def __init__(self, a, b, room, interval):
        super().__init__(daemon=True)
        self.peers, self.room, self.interval = (a, b), room, interval
        self.stop = threading.Event()
        self.sent = {}  # uid -> (receiving peer, monotonic time sent)

    def run(self):
        n = 0
        while not self.stop.is_set():
            sender, receiver = self.peers[n % 2], self.peers[(n + 1) % 2]
            uid = f"good-{n}"
            self.sent[uid] = (receiver, time.monotonic())
            sender.publish(f"chat-in/{self.room['uid']}",
                           mqtt_cases.dump(mqtt_cases.envelope(self.room["id"], uid, content=f"good {n}")))
            n += 1
            self.stop.wait(self.interval)

    def arrivals(self):
        """uid -> arrival time on the receiving peer's subscription of the room."""
        seen = {}
        for peer in self.peers:
            with peer.changed:
                messages = list(peer.messages)
            for topic, payload, _, received in messages:
                if topic != f"chat-room/{self.room['uid']}":
                    continue
                event = common.events([payload])
                if event and event[0].get("type") == "new-message-notification":
                    uid = event[0]["data"].get("uid")
                    if uid in self.sent and self.sent[uid][0] is peer:
                        seen.setdefault(uid, received)
        return seen

    def missing(self, grace):
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            missing = set(self.sent) - set(self.arrivals())
            if not missing:
                return set()
            time.sleep(0.2)
        return set(self.sent) - set(self.arrivals())


class Fuzzer:
    """F's connection and the fate of each publish."""

    def __init__(self, stack, account, room, timeout):
        self.stack, self.account, self.room, self.timeout = stack, account, room, timeout
        self.peer = None
        self.reconnect()

    def reconnect(self):
        if self.peer:
            self.peer.close()
        self.peer = common.MqttPeer(self.stack, self.account, "fuzzer").connect()
        for topic in (f"messenger-notifications/{self.account.id}", f"chat-room/{self.room['uid']}"):
            self.peer.subscribe(topic)

    def _verdict(self, mark, mid, disconnects, uid):
        """The first decisive thing since the publish, or None. An answer naming another
        uid belongs to an earlier case and is skipped."""
        peer = self.peer
        if len(peer.disconnects) > disconnects:
            return "closed", None
        code = peer.acks.get(mid)
        if code is not None and code >= 0x80:
            return f"refused 0x{code:02x}", None
        for topic, payload, _, _ in peer.messages[mark:]:
            event = (common.events([payload]) or [{}])[0]
            data = event.get("data") if isinstance(event.get("data"), dict) else {}
            if uid is not None and data.get("uid") is not None and data.get("uid") != uid:
                continue
            if topic.startswith("messenger-notifications/") and event.get("type") == "message-rejected":
                return f"rejected {data.get('code')}", event
            if topic.startswith("chat-room/") and event.get("type") in ACCEPTED_EVENTS:
                return "accepted", event
        return None

    def send(self, case):
        """Publishes a case and returns (outcome, event)."""
        peer = self.peer
        with peer.changed:
            mark, disconnects = len(peer.messages), len(peer.disconnects)
        topic = case.topic or f"chat-in/{self.room['uid']}"
        try:
            mid = peer.publish(topic, case.payload, qos=case.qos, retain=case.retain,
                               user_properties=case.user_properties)
        except ValueError as error:  # paho refuses it before sending: the raw path covers such topics
            return f"not sent: {error}", None
        uid = payload_uid(case.payload)
        peer.wait(lambda: self._verdict(mark, mid, disconnects, uid) is not None, self.timeout)
        verdict = self._verdict(mark, mid, disconnects, uid) or ("silent", None)
        if verdict[0] == "closed":
            self.reconnect()
        return verdict


def main():
    args = common.common_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])).parse_args()
    stack = common.Stack.from_env()
    started = time.monotonic()
    watch = common.Watch(stack)
    result = common.Result("mqtt")
    accounts = common.Accounts(stack, label="fuzz-mqtt")
    a, b, f, p = (accounts.user(first=name) for name in ("Alice", "Bob", "Fuzz", "Presence"))
    pair_room = accounts.two_party_room(a, b)
    room = accounts.multiparty_room(f, [a, b, p], name="mqtt fuzz room")

    peer_a = common.MqttPeer(stack, a, "A").connect()
    peer_b = common.MqttPeer(stack, b, "B").connect()
    for peer in (peer_a, peer_b):
        peer.subscribe(f"chat-room/{pair_room['uid']}")
    traffic = GoodTraffic(peer_a, peer_b, pair_room, interval=0.1)
    traffic.start()

    fuzzer = Fuzzer(stack, f, room, timeout=2.0 if args.short else 4.0)
    accepted = {}
    cases = mqtt_cases.chat_in_cases(room, pair_room, a.id)
    cases += mqtt_cases.mutations(room, 30 if args.short else 400, args.seed)
    print(f"chat-in: {len(cases)} cases...")
    chat_in_phase(fuzzer, cases, result, accepted, p, stack)
    print("replays, subscriptions, presence...")
    replay_phase(fuzzer, result, accepted)
    subscription_phase(fuzzer, pair_room, a.id, result)
    presence_phase(stack, p, peer_a, result)
    print("raw packets...")
    raw_phase(stack, p, a, room["uid"], result, 100 if args.short else 1000, args.seed, 1.0 if args.short else 2.0)

    traffic.stop.set()
    traffic.join(2)
    missing = traffic.missing(grace=10)
    arrivals = traffic.arrivals()
    latencies = sorted((arrivals[u] - traffic.sent[u][1]) * 1000 for u in arrivals if u in traffic.sent)
    result.cases += len(traffic.sent)
    if latencies:
        result.notes.append(f"good traffic: {len(traffic.sent)} messages, {len(missing)} missing, delivery p50 "
                            f"{statistics.median(latencies):.0f} ms, max {latencies[-1]:.0f} ms")
    if missing:
        result.fail("good traffic during the fuzzing", f"{len(traffic.sent)} valid messages A<->B",
                    "every message delivered", f"{len(missing)} missing, e.g. {sorted(missing)[:5]}")
    for peer in (peer_a, peer_b):
        if peer.disconnects:
            result.fail(f"good client {peer.name} during the fuzzing", "a connected client", "never disconnected",
                        f"disconnects {peer.disconnects}")
    print("the largest message...")
    outbox_phase(fuzzer, accounts, f, (peer_a, peer_b, pair_room), room, result, accepted)
    # A fresh client still gets in.
    try:
        common.MqttPeer(stack, p, "after").connect().close()
    except RuntimeError as error:
        result.fail("a new MQTT connection after the fuzzing", "CONNECT", "CONNACK 0", str(error))
    verify_history(accounts, f, room, accepted, result, "fuzzed room")
    verify_history(accounts, a, pair_room, set(traffic.sent) | {f"probe-{n}" for n in range(PROBES)}, result,
                   "good traffic room")
    for peer in (peer_a, peer_b, fuzzer.peer):
        peer.close()
    return common.finish(result, watch, started, args.output)


if __name__ == "__main__":
    sys.exit(main())
