#!/usr/bin/env python3
"""Synapse under the chat-2 shape, for `deploy/bench/synapse` (run in Synapse's virtualenv).

Rooms of two: each member sends on the client-server API (`PUT .../send/m.room.message/{txn}`)
and reads on `/sync` (a long poll per member). The offered rate steps up, open loop: message i
is due at start + i / rate whatever the answers do, and its latency runs from that due time to
its arrival in the other member's `/sync`. A step passes when every message arrived within the
drain time and p99 <= the limit; after the first failure the gap is narrowed twice, as
Parley's ladders do. CPU per message is Synapse's process and PostgreSQL's process tree over the
step (both from /proc), the same way `parley-load` counts Parley's.

Writes a scenario JSON for report.py: Parley's chat-2 ladder of the same run as the subject,
Synapse's as the baseline, the ratio Parley's sustained rate over Synapse's.
"""
import argparse, asyncio, hashlib, hmac, json, os, time, uuid

import aiohttp

from report import SERVER, figure  # deploy/bench/report.py, beside this script

TICKS = os.sysconf("SC_CLK_TCK")
SYNC_FILTER = json.dumps({
    "presence": {"types": []}, "account_data": {"types": []},
    "room": {"timeline": {"limit": 100, "types": ["m.room.message"]}, "state": {"lazy_load_members": True},
             "ephemeral": {"types": []}, "account_data": {"types": []}},
})


def tree_cpu(root):
    """CPU seconds of a process and its descendants (live ones, with their exited children)."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / TICKS)
    total, queue = 0.0, [root]
    while queue:
        pid = queue.pop()
        if pid in table:
            total += table[pid][1]
            queue += [child for child, (parent, _) in table.items() if parent == pid]
    return total


def percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Bench:
    def __init__(self, args):
        self.args = args
        self.base = f"http://127.0.0.1:{args.port}"
        self.due = {}        # message id -> due time (monotonic)
        self.latencies = {}  # message id -> seconds
        self.errors = 0
        self.stopping = False

    async def register(self, session, name):
        url = f"{self.base}/_synapse/admin/v1/register"
        async with session.get(url) as response:
            nonce = (await response.json())["nonce"]
        password = "bench-" + name
        mac = hmac.new(self.args.shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), name.encode(), password.encode(), b"notadmin"]))
        body = {"nonce": nonce, "username": name, "password": password, "admin": False, "mac": mac.hexdigest()}
        async with session.post(url, json=body) as response:
            answer = await response.json()
            if response.status != 200:
                raise RuntimeError(f"register {name}: {response.status} {answer}")
            return answer["user_id"], answer["access_token"]

    async def call(self, session, method, path, token, body=None):
        async with session.request(method, self.base + path, json=body,
                                   headers={"Authorization": f"Bearer {token}"}) as response:
            answer = await response.json()
            if response.status != 200:
                raise RuntimeError(f"{method} {path}: {response.status} {answer}")
            return answer

    async def sync_loop(self, session, user_id, token):
        since = None
        while not self.stopping:
            # As clients poll: 30 s, answered as soon as something arrives.
            params = {"filter": SYNC_FILTER, "timeout": "30000" if since else "0"}
            if since:
                params["since"] = since
            try:
                async with session.get(f"{self.base}/_matrix/client/v3/sync", params=params,
                                       headers={"Authorization": f"Bearer {token}"}) as response:
                    answer = await response.json()
            except (aiohttp.ClientError, asyncio.TimeoutError):
                self.errors += 1
                await asyncio.sleep(0.1)
                continue
            now = time.monotonic()
            since = answer.get("next_batch", since)
            for room in answer.get("rooms", {}).get("join", {}).values():
                for event in room.get("timeline", {}).get("events", []):
                    body = event.get("content", {}).get("body", "")
                    if event.get("sender") != user_id and body in self.due and body not in self.latencies:
                        self.latencies[body] = now - self.due[body]

    async def send(self, session, room_id, token, message_id):
        path = f"/_matrix/client/v3/rooms/{room_id}/send/m.room.message/{uuid.uuid4().hex}"
        try:
            await self.call(session, "PUT", path, token, {"msgtype": "m.text", "body": message_id})
        except (RuntimeError, aiohttp.ClientError, asyncio.TimeoutError):
            self.errors += 1

    async def step(self, session, pairs, rate, seconds, label):
        count = int(rate * seconds)
        ids = [f"{label}-{i}" for i in range(count)]
        errors_before = self.errors
        cpu_before = {name: tree_cpu(pid) for name, pid in self.args.watch.items()}
        start = time.monotonic() + 0.05
        sends = []
        for i, message_id in enumerate(ids):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self.due[message_id] = due
            room_id, members = pairs[i % len(pairs)]
            token = members[(i // len(pairs)) % 2][1]
            sends.append(asyncio.create_task(self.send(session, room_id, token, message_id)))
        await asyncio.gather(*sends)
        deadline = time.monotonic() + self.args.drain
        while time.monotonic() < deadline and any(m not in self.latencies for m in ids):
            await asyncio.sleep(0.05)
        cpu_after = {name: tree_cpu(pid) for name, pid in self.args.watch.items()}
        latencies = [self.latencies[m] * 1000 for m in ids if m in self.latencies]
        completed = len(latencies)
        p99 = percentile(latencies, 0.99)
        errors = self.errors - errors_before
        passed = completed == count and errors == 0 and p99 <= self.args.p99_limit
        result = {
            "offeredRate": rate, "achievedRate": rate if passed else completed / seconds, "passed": passed,
            "expected": count, "completed": completed, "errors": errors,
            "latency": {"p50": percentile(latencies, 0.5), "p99": p99, "p999": percentile(latencies, 0.999)},
            "cpuSecondsPerOperation": {
                name: (cpu_after[name] - cpu_before[name]) / max(completed, 1) for name in self.args.watch},
        }
        print(f"synapse: {rate} msg/s: {completed}/{count} delivered, p50 {result['latency']['p50']:.1f} ms, "
              f"p99 {p99:.1f} ms, errors {errors}, "
              f"CPU µs per message: " + ", ".join(
                  f"{k} {v * 1e6:,.0f}" for k, v in result["cpuSecondsPerOperation"].items()), flush=True)
        return result

    async def run(self):
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=60)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            tag = uuid.uuid4().hex[:6]
            users = [await self.register(session, f"bench{tag}{n}") for n in range(2 * self.args.rooms)]
            pairs = []
            for n in range(self.args.rooms):
                first, second = users[2 * n], users[2 * n + 1]
                room = await self.call(session, "POST", "/_matrix/client/v3/createRoom", first[1],
                                       {"preset": "trusted_private_chat", "invite": [second[0]], "is_direct": True})
                await self.call(session, "POST", f"/_matrix/client/v3/join/{room['room_id']}", second[1], {})
                pairs.append((room["room_id"], (first, second)))
            print(f"synapse: {len(users)} users in {len(pairs)} rooms of two", flush=True)
            syncs = [asyncio.create_task(self.sync_loop(session, user_id, token)) for user_id, token in users]
            await asyncio.sleep(2)
            await self.step(session, pairs, self.args.warmup_rate, 3, "warmup")
            steps, best_pass, first_fail = [], None, None

            async def offer(rate, label):
                nonlocal best_pass, first_fail
                result = await self.step(session, pairs, rate, self.args.step_seconds, label)
                steps.append(result)
                if result["passed"]:
                    best_pass = rate
                else:
                    first_fail = rate
                return result["passed"]

            for rate in self.args.rates:
                if not await offer(rate, f"r{rate}"):
                    break
            for _ in range(2):
                if best_pass is None or first_fail is None or first_fail - best_pass <= 1:
                    break
                await offer((best_pass + first_fail) // 2, f"n{(best_pass + first_fail) // 2}")
            self.stopping = True
            for sync in syncs:
                sync.cancel()
            await asyncio.gather(*syncs, return_exceptions=True)
            return steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--shared-secret", required=True)
    parser.add_argument("--watch", action="append", default=[], help="name=pid, a process tree to count")
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--rates", default="2,5,10,20,30,50,75,100,150,200,300,400,600,800,1000")
    parser.add_argument("--warmup-rate", type=int, default=5)
    parser.add_argument("--step-seconds", type=int, default=5)
    parser.add_argument("--drain", type=float, default=5.0)
    parser.add_argument("--p99-limit", type=float, default=50.0)
    parser.add_argument("--version", default="Synapse")
    parser.add_argument("--parley-result", help="chat-2's JSON of the same run")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    args.watch = {name: int(pid) for name, pid in (item.split("=", 1) for item in args.watch)}
    args.rates = [int(r) for r in args.rates.split(",")]
    steps = asyncio.run(Bench(args).run())
    with open(args.parley_result) as f:
        parley = json.load(f)
    synapse_side = {"label": args.version, "unit": "msg/s", "p99Limit": args.p99_limit, "steps": steps}

    parley_rate, parley_best = figure(parley["subject"])
    synapse_rate, synapse_best = figure(synapse_side)
    ratio = parley_rate / synapse_rate if parley_best and synapse_best else None
    notes = [
        f"{args.version} from PyPI in a virtualenv of its own, PostgreSQL (the benchmark's cluster, a database "
        "of its own, C collation) as Synapse advises for production; presence, metrics and rate limits off, "
        "bcrypt rounds 4 (registration is not measured), one main process (no workers)",
        f"the chat-2 shape: {args.rooms} rooms of two, each member sending on the client-server API and reading "
        "on /sync (a long poll each, lazy-loaded members, message events only)",
        "latency: intended send time to the message's arrival in the other member's /sync (open loop); "
        f"a Synapse step passes with p99 <= {args.p99_limit:.0f} ms and every message delivered within "
        f"{args.drain:.0f} s (Parley's chat-2 steps: p99 <= {parley['subject'].get('p99Limit', 50):.0f} ms); "
        "the gap after the first failure is narrowed twice",
        "ratio: Parley's sustained messages/s (chat-2, this run) over Synapse's (higher is better)",
    ]
    delivered = [s for s in steps if s["completed"] == s["expected"] and s["errors"] == 0]
    if delivered:
        top = max(delivered, key=lambda s: s["offeredRate"])
        notes.append(f"Synapse's highest step with every message delivered, whatever the latency: "
                     f"{top['offeredRate']:,} msg/s (p50 / p99 {top['latency']['p50']:.0f} / "
                     f"{top['latency']['p99']:.0f} ms)")
    if synapse_best:
        synapse_cpu = sum(synapse_best["cpuSecondsPerOperation"].values())
        notes.append(f"server CPU µs per message, Synapse at its sustained {synapse_best['offeredRate']:,} msg/s: "
                     f"{synapse_cpu * 1e6:,.0f} (" + ", ".join(
                         f"{k} {v * 1e6:,.0f}" for k, v in synapse_best["cpuSecondsPerOperation"].items()) + ")")
        # Parley's ladder starts higher: its lowest step at or above Synapse's rate, where its
        # fixed costs weigh more per message than at its own sustained rate.
        nearest = min(parley["subject"]["steps"], key=lambda s: abs(s["offeredRate"] - synapse_best["offeredRate"]))
        parley_cpu = sum(nearest["cpuSecondsPerOperation"].get(k, 0) for k in SERVER)
        notes.append(f"server CPU µs per message, Parley at {nearest['offeredRate']:,} msg/s (its step nearest "
                     f"Synapse's sustained rate, its lowest): {parley_cpu * 1e6:,.0f}; Synapse / Parley: "
                     f"{synapse_cpu / parley_cpu:,.1f}x")
    result = {
        "scenario": "synapse", "title": f"Parley against {args.version}, the chat-2 shape ({args.rooms} rooms of 2)",
        "subject": parley["subject"], "baseline": synapse_side, "ratio": ratio, "notes": notes,
    }
    with open(args.output, "w") as f:
        json.dump(result, f, indent=2)
    print(f"synapse: sustained {synapse_best['offeredRate'] if synapse_best else 0} msg/s; ratio {ratio}")


if __name__ == "__main__":
    main()
