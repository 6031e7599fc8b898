#!/usr/bin/env python3
"""Checks a chaos run (deploy/chaos/run) message by message and prints its table.

    verify.py --dir DIR --pg-port PORT --redis-port PORT [options]

DIR holds the run's records: load/ (parley-load chaos: rooms.json, sent.jsonl, received.jsonl,
errors.jsonl, reads.jsonl, summary.json), faults.jsonl, readiness.jsonl, processes.jsonl, incidents.jsonl.
PostgreSQL is read with psql (PGPASSWORD), Redis with redis-cli (REDISCLI_AUTH), both directly,
not through the run's proxies.

Failures (exit 1): an acknowledged send not stored (lost) or stored twice, a room whose seq has a
gap, a delivery whose seq differs from the stored one, duplicate deliveries with different
hashes, a delivery of nothing stored, jobs left pending, waiting or dead-lettered, outbox rows
left, a process that exited unbidden or is not ready at the end, skipped faults (--incomplete).
Goals (reported; failures with --strict): recovery within 10 s of the fault's end (the first
acknowledged send and readiness 200), every stored message delivered to every other member,
serve's readiness not 200 during an outage of a dependency.

Each send is attributed to the fault window in which it was first acknowledged: from the
fault's start to the next fault's start ("before the faults" until the first).
"""

import argparse
import bisect
import csv
import io
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict

from checks import Checks
from records import GOAL_SECONDS, clock, read_json, read_jsonl, seconds

class Store:
    """PostgreSQL through psql; Redis through redis-cli."""

    def __init__(self, args):
        self.args = args

    def query(self, sql):
        a = self.args
        command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", a.pg_host, "-p", str(a.pg_port),
                   "-U", a.pg_user, "-d", a.pg_database, "-c", f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"psql: {result.stderr.strip()}")
        return list(csv.reader(io.StringIO(result.stdout)))

    def redis(self, *command):
        result = subprocess.run(["redis-cli", "--no-auth-warning", "-p", str(self.args.redis_port), *command],
                                capture_output=True, text=True, timeout=30)
        return result.stdout.splitlines()

    def redis_int(self, *command):
        lines = self.redis(*command)
        try:
            return int(lines[0])
        except (IndexError, ValueError):
            return 0  # no such stream or group: nothing in it


class Window:
    def __init__(self, name, start, end, fault=None):
        self.name, self.start, self.end, self.fault = name, start, end, fault
        self.acknowledged = self.stored = self.lost = self.duplicated = 0
        self.delivered = self.duplicate_deliveries = self.failed_attempts = self.retried_after_ack = 0
        self.reads = self.failed_reads = 0
        self.longest_pause = None
        self.recover_ack = self.recover_ready = None
        self.recover_via = None
        self.readiness = "–"
        self.lost_uids, self.duplicated_uids, self.undelivered = [], [], []


class Verification(Checks):
    def __init__(self, args):
        self.args = args
        self.dir = args.dir
        self.store = Store(args)
        self.failures = []
        self.goals = []  # goals not met
        self.notes = []
        self.faults = [f for f in read_jsonl(os.path.join(self.dir, "faults.jsonl")) if not f.get("skipped")]
        self.skipped = [f for f in read_jsonl(os.path.join(self.dir, "faults.jsonl")) if f.get("skipped")]
        self.readiness = read_jsonl(os.path.join(self.dir, "readiness.jsonl"))
        self.windows = self.make_windows()

    def fail(self, message):
        self.failures.append(message)

    def goal(self, message):
        (self.failures if self.args.strict else self.goals).append(message)

    def make_windows(self):
        start = self.args.load_started or 0
        stop = self.args.load_stopped or 2**62
        windows = [Window("before the faults", start, self.faults[0]["start"] if self.faults else stop)]
        for i, fault in enumerate(self.faults):
            end = self.faults[i + 1]["start"] if i + 1 < len(self.faults) else stop
            windows.append(Window(fault["fault"], fault["start"], end, fault))
        return windows

    def just_before(self, t):
        """', 0.2 s before kill -9 ingest began' when a fault began within 2 s after t: a send
        acknowledged just before a fault may be lost by it, and is counted in the window before."""
        for f in self.faults:
            if 0 <= f["start"] - t <= 2000:
                return f", {seconds(f['start'] - t)} before {f['fault']} began"
        return ""

    def window_of(self, t):
        starts = [w.start for w in self.windows[1:]]
        return self.windows[bisect.bisect_right(starts, t)]

    # Messages

    def check_messages(self):
        load = os.path.join(self.dir, "load")
        rooms = {r["id"]: r for r in read_json(os.path.join(load, "rooms.json"), [])}
        if not rooms:
            self.fail("no rooms.json: the load generator did not set up")
            return
        sent = read_jsonl(os.path.join(load, "sent.jsonl"))
        received = read_jsonl(os.path.join(load, "received.jsonl"))
        errors = read_jsonl(os.path.join(load, "errors.jsonl"))
        self.summary = read_json(os.path.join(load, "summary.json"))
        if self.summary is None:
            self.fail("no summary.json: the load generator did not finish its drain")

        # Acknowledged sends: (room, sender, uid) -> first acknowledgement
        acknowledged = {}
        acknowledged_twice = 0
        for s in sent:
            key = (s["room"], s["sender"], s["uid"])
            if key in acknowledged:
                acknowledged_twice += 1
                acknowledged[key]["t"] = min(acknowledged[key]["t"], s["t"])
            else:
                acknowledged[key] = dict(s)
        self.acknowledged_twice = acknowledged_twice

        # Stored: (room, uid) -> [(seq, sender)], and every room's seqs
        ids = ",".join(str(int(r)) for r in rooms)
        stored = defaultdict(list)
        seqs = defaultdict(list)
        for room, seq, sender, uid in self.store.query(
                f"SELECT chat_room_id, seq, sent_by_id, uid FROM messenger.message WHERE chat_room_id IN ({ids})"):
            stored[(int(room), uid)].append((int(seq), int(sender) if sender else None))
            seqs[int(room)].append(int(seq))
        last_seq = {int(room): int(last) for room, last in self.store.query(
            f"SELECT id, last_seq FROM messenger.chat_room WHERE id IN ({ids})")}

        # Gap-free seq per room: exactly 1..last_seq
        for room in rooms:
            have = sorted(seqs.get(room, []))
            expected = list(range(1, last_seq.get(room, 0) + 1))
            if have != expected:
                missing = sorted(set(expected) - set(have))
                repeated = [s for s, n in Counter(have).items() if n > 1]
                self.fail(f"room {room}: seq not gap-free (last_seq {last_seq.get(room)}, {len(have)} rows, "
                          f"missing {missing[:10]}, repeated {repeated[:10]})")

        # Deliveries: (room, uid, receiver) -> [(hash, seq)]
        deliveries = defaultdict(list)
        for r in received:
            deliveries[(r["room"], r["uid"], r["receiver"])].append((r.get("hash"), r.get("seq")))
        stored_seq = {key: rows[0][0] for key, rows in stored.items()}
        phantom = {(room, uid) for room, uid, _ in deliveries if (room, uid) not in stored}
        if phantom:
            self.fail(f"{len(phantom)} message(s) delivered but not stored, e.g. {sorted(phantom)[:3]}")
        wrong_seq = [(key, seq) for key, copies in deliveries.items() for _, seq in copies
                     if (key[0], key[1]) in stored_seq and seq is not None and seq != stored_seq[(key[0], key[1])]]
        if wrong_seq:
            self.fail(f"{len(wrong_seq)} delivery(ies) with a seq other than the stored one, e.g. {wrong_seq[:3]}")
        hashes_differ = [key for key, copies in deliveries.items() if len({h for h, _ in copies}) > 1]
        if hashes_differ:
            self.fail(f"{len(hashes_differ)} duplicate delivery(ies) with different hashes, e.g. {hashes_differ[:3]}")

        for (room, sender, uid), s in acknowledged.items():
            w = self.window_of(s["t"])
            w.acknowledged += 1
            rows = stored.get((room, uid), [])
            mine = [row for row in rows if row[1] == sender]
            if not mine:
                w.lost += 1
                w.lost_uids.append(f"{room}/{uid} ({s.get('via')}, acknowledged {clock(s['t'])}{self.just_before(s['t'])})")
                continue
            w.stored += 1
            if len(rows) > 1:
                w.duplicated += 1
                w.duplicated_uids.append(f"{room}/{uid} seqs {[row[0] for row in rows]}")
            members = [m for m in rooms.get(room, {}).get("members", []) if m != sender]
            missing = [m for m in members if not deliveries.get((room, uid, m))]
            if missing:
                w.undelivered.append(f"{room}/{uid} to {missing[:5]}{'…' if len(missing) > 5 else ''}")
            else:
                w.delivered += 1
            w.duplicate_deliveries += sum(max(0, len(deliveries.get((room, uid, m), [])) - 1) for m in members)
        for w in self.windows:
            if w.lost:
                self.fail(f"{w.name}: {w.lost} acknowledged send(s) not stored")
            if w.duplicated:
                self.fail(f"{w.name}: {w.duplicated} acknowledged send(s) stored more than once")
        for e in errors:
            if "t" in e:
                w = self.window_of(e["t"])
                w.failed_attempts += 1
                # A publish the broker acknowledged that the client still had to send again.
                if e.get("via") == "mqtt-acknowledged":
                    w.retried_after_ack += 1
        for w in self.windows:
            if w.fault and w.fault.get("id") == "mqtt-restart" and w.retried_after_ack:
                self.fail(f"{w.name}: {w.retried_after_ack} acknowledged publish(es) needed the client's retry")
        self.has_reads = os.path.exists(os.path.join(load, "reads.jsonl")) and \
            os.path.getsize(os.path.join(load, "reads.jsonl")) > 0
        for r in read_jsonl(os.path.join(load, "reads.jsonl")):
            w = self.window_of(r["t"])
            w.reads += 1
            w.failed_reads += r.get("status") != 200

        acknowledged_uids = {(room, uid) for room, _, uid in acknowledged}
        unacknowledged = [key for key in stored if key[1].startswith("c-") and key not in acknowledged_uids]
        if unacknowledged:
            self.notes.append(f"{len(unacknowledged)} stored message(s) of the load were never acknowledged to it "
                              "(an answer lost and no retry answered before the load stopped)")
        if acknowledged_twice:
            self.notes.append(f"{acknowledged_twice} send(s) acknowledged twice (a retry after a lost answer)")

        # Time to recover: from the fault's end to the first acknowledgement after it, on each
        # path (REST, MQTT) the load sends by; the slower counts (a broker outage stops only
        # MQTT's, a PostgreSQL one only REST's: the broker acknowledges before the ingest stores).
        times = defaultdict(list)
        for s in sent:
            times[s.get("via", "?")].append(s["t"])
        for via in times:
            times[via].sort()
        for w in self.windows[1:]:
            # The longest time without an acknowledgement on one path, from the fault's start
            # to the first acknowledgement after its end: how long senders waited through it.
            pauses = []
            for ts in times.values():
                i = bisect.bisect_left(ts, w.fault["start"])
                j = bisect.bisect_left(ts, w.fault["end"])
                # A path with no acknowledgement after the fault paused until the window's end.
                points = [w.fault["start"]] + ts[i:j + 1] + ([w.end] if j == len(ts) else [])
                pauses += [b - a for a, b in zip(points, points[1:])]
            w.longest_pause = max(pauses) if pauses else None
            delays = {}
            for via, ts in times.items():
                i = bisect.bisect_left(ts, w.fault["end"])
                delays[via] = ts[i] - w.fault["end"] if i < len(ts) else None
            never = sorted(via for via, delay in delays.items() if delay is None)
            if never:
                w.recover_ack, w.recover_via = None, never[0]
            elif delays:
                w.recover_via = max(delays, key=delays.get)
                w.recover_ack = delays[w.recover_via]

    # Webhooks

    def check_webhooks(self):
        """Every stored message of the load's rooms reached the webhook receiver (hooks.py), in seq
        order per room, signed: waits up to --jobs-wait for the deliveries to catch up."""
        rooms = {r["id"] for r in read_json(os.path.join(self.dir, "load", "rooms.json"), [])}
        if not rooms:
            return
        ids = ",".join(str(int(r)) for r in rooms)
        stored = {int(m): (int(room), int(seq)) for m, room, seq in self.store.query(
            f"SELECT id, chat_room_id, seq FROM messenger.message WHERE chat_room_id IN ({ids})")}
        deadline = time.time() + self.args.jobs_wait
        while True:
            records = [r for r in read_jsonl(self.args.webhooks) if r.get("type") == "message.created"]
            received = {r["message"] for r in records}
            if set(stored) <= received or time.time() > deadline:
                break
            time.sleep(1)
        lost = sorted(set(stored) - received)
        order = defaultdict(list)
        seen = set()
        for r in records:
            if r["message"] in stored and r["message"] not in seen:
                seen.add(r["message"])
                order[stored[r["message"]][0]].append(stored[r["message"]][1])
        out_of_order = sum(1 for seqs in order.values() for a, b in zip(seqs, seqs[1:]) if b < a)
        unverified = sum(1 for r in read_jsonl(self.args.webhooks) if not r.get("verified"))
        duplicates = len(records) - len(seen)
        self.webhooks = (f"webhooks: {len(stored)} stored, {len(seen)} delivered, {len(lost)} lost, "
                         f"{out_of_order} out of order, {duplicates} delivered again (at least once), "
                         f"{unverified} not verified")
        if lost:
            self.fail(f"{len(lost)} stored message(s) never reached the webhook, e.g. {lost[:5]}")
        if out_of_order:
            self.fail(f"{out_of_order} webhook delivery(ies) out of their room's order")
        if unverified:
            self.fail(f"{unverified} webhook request(s) whose signature did not verify")

    # Report

    def goals_per_window(self):
        for w in self.windows[1:]:
            for label, value in (("first acknowledged send", w.recover_ack), ("readiness 200", w.recover_ready)):
                if value is not None and value > GOAL_SECONDS * 1000:
                    self.goal(f"{w.name}: {label} {seconds(value)} after the fault ended (goal ≤ {GOAL_SECONDS} s)")
            if w.recover_ack is None and not self.args.no_load:
                self.goal(f"{w.name}: no acknowledged send after the fault ended")
            if w.undelivered:
                self.goal(f"{w.name}: {len(w.undelivered)} stored message(s) not delivered to every other member, "
                          f"e.g. {w.undelivered[:3]}")

    def table(self):
        with_load = not self.args.no_load
        header = ["fault", "recover: ack", "recover: ready", "readiness"]
        if with_load:
            header += ["longest pause", "acknowledged", "stored", "lost", "dup in store", "delivered",
                       "dup deliveries", "failed attempts", "retried after PUBACK"]
        reads = with_load and getattr(self, "has_reads", False)
        if reads:
            header += ["reads", "failed reads"]
        rows = []
        for w in self.windows:
            ack = "–"
            if w.fault and with_load:
                ack = f"{seconds(w.recover_ack)} ({w.recover_via})" if w.recover_ack is not None else "never"
            row = [w.name, ack,
                   seconds(w.recover_ready) if w.fault else "–", w.readiness]
            if with_load:
                row += [seconds(w.longest_pause) if w.fault else "–", w.acknowledged, w.stored, w.lost,
                        w.duplicated, w.delivered, w.duplicate_deliveries, w.failed_attempts, w.retried_after_ack]
            if reads:
                row += [w.reads, w.failed_reads]
            rows.append(row)
        if with_load:
            total = ["total", "", "", "", ""] + [sum(r[i] for r in rows) for i in range(5, len(header))]
            rows.append(total)
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        return "\n".join(lines)

    def run(self):
        if not self.args.no_load:
            self.check_messages()
            if self.args.webhooks:
                self.check_webhooks()
        self.check_readiness()
        self.check_jobs()
        self.check_processes()
        self.goals_per_window()
        if self.args.incomplete or self.skipped:
            self.fail(f"faults skipped (time budget spent): {[f['fault'] for f in self.skipped]}")

        print(self.table())
        print()
        print("recover: from the fault's end (process started again, service back, partition healed) to the "
              "first acknowledged send on the path (rest, mqtt) that took longest, and to the last return of "
              "its readiness to 200 (the killed worker's own for a worker, serve's otherwise); readiness: what "
              "it answered instead of 200 meanwhile; longest pause: the longest time without an acknowledged "
              "send on one path from the fault's start to the first one after its end; dup in store: acknowledged sends stored more than once; "
              "delivered: stored messages that reached every other member on the room topic; dup deliveries: "
              "copies beyond the first (same hash); failed attempts: sends that failed and were retried; "
              "retried after PUBACK: chat-in publishes the broker acknowledged that the client had to send "
              "again (message-rejected unavailable: none for a graceful broker restart); "
              "reads: history and room-list reads made, and those not answered 200 (not retried).")
        if getattr(self, "summary", None):
            print(f"\nload summary: {json.dumps(self.summary)}")
        if getattr(self, "webhooks", None):
            print(f"\n{self.webhooks}")
        print("\njob queues at the end: " + "; ".join(
            f"{q} " + ", ".join(f"{n} {what}" for what, n in s.items()) for q, s in self.jobs.items()))
        for w in self.windows:
            for label, items in (("LOST", w.lost_uids), ("STORED TWICE", w.duplicated_uids)):
                if items:
                    print(f"\n{w.name}: {label} {len(items)}: " + ", ".join(items[:20]))
        if getattr(self, "readiness_notes", None):
            print("\nreadiness other than 200, by fault window:")
            for n in self.readiness_notes:
                print(f"  {n}")
        for n in self.notes:
            print(f"note: {n}")
        for g in self.goals:
            print(f"GOAL NOT MET: {g}")
        for f in self.failures:
            print(f"FAILED: {f}")
        lost = sum(w.lost for w in self.windows)
        duplicated = sum(w.duplicated for w in self.windows)
        print(f"\n{'PASSED' if not self.failures else 'FAILED'}: {lost} lost, {duplicated} stored twice, "
              f"{len(self.failures)} failure(s), {len(self.goals)} goal(s) not met")
        return 1 if self.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--pg-host", default="127.0.0.1")
    parser.add_argument("--pg-port", type=int, required=True)
    parser.add_argument("--pg-user", default="parley")
    parser.add_argument("--pg-database", default="parley")
    parser.add_argument("--redis-port", type=int, required=True)
    parser.add_argument("--load-started", type=int, help="unix ms the load began sending")
    parser.add_argument("--load-stopped", type=int, help="unix ms the load was told to stop")
    parser.add_argument("--jobs-wait", type=float, default=60, help="seconds to wait for the queues to empty")
    parser.add_argument("--no-load", action="store_true", help="no load ran: skip the message checks")
    parser.add_argument("--webhooks", help="hooks.py's records: check that every stored message reached them")
    parser.add_argument("--strict", action="store_true", help="goals not met are failures")
    parser.add_argument("--incomplete", action="store_true", help="some faults were skipped")
    args = parser.parse_args()
    return Verification(args).run()


if __name__ == "__main__":
    sys.exit(main())
