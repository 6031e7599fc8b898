"""The chaos run's checks of readiness, job queues, the outbox and processes: a part of
verify.py's Verification, which holds the records, the windows and the failures."""

import os
import time

from records import QUEUES, READINESS_WAIT, clock, read_jsonl, seconds


class Checks:
    # Readiness

    def intervals(self, target):
        """[(start, end or None, state, details, seen)] of the target's spells of answers other than
        200: from when the first such poll was sent to when the next 200 came back; seen is when that
        first answer came back (a poll sent just before a fault may be answered during it)."""
        out, current = [], None
        for r in self.readiness:
            if r.get("target") != target or r.get("end"):
                continue
            if r["state"] != "200":
                what = f"{r['state']} {r.get('detail') or ''}".strip()
                if current is None:
                    current = [r["t"], None, r["state"], [what], r.get("answered", r["t"])]
                elif what not in current[3]:
                    current[3].append(what)
            elif current is not None:
                current[1] = r.get("answered", r["t"])
                out.append(tuple(current))
                current = None
        if current is not None:
            out.append(tuple(current))
        return [(start, end, state, "; ".join(details), seen) for start, end, state, details, seen in out]

    @staticmethod
    def overlaps(spell, window):
        """A spell not ready belongs to a fault's window when its first such answer came back before
        the window's end (the next fault's start) and it ended, if at all, after the fault began: a
        poll sent just before the next fault and answered unready during it is the next fault's."""
        return spell[4] < window.end and (spell[1] is None or spell[1] > window.fault["start"])

    def check_readiness(self):
        if not self.readiness:
            self.fail("no readiness record (readiness.py did not run)")
            return
        targets = sorted({r["target"] for r in self.readiness})
        spans = {t: self.intervals(t) for t in targets}
        self.readiness_notes = []
        for w in self.windows[1:]:
            f = w.fault
            target = f.get("readiness", "serve")
            mine = [s for s in spans.get(target, []) if self.overlaps(s, w)]
            if not mine:
                w.recover_ready = 0
                w.readiness = "200 throughout"
            else:
                last = mine[-1]
                if last[1] is None or last[1] > w.end:
                    w.recover_ready = None
                    w.readiness = f"{last[2]} until the next fault"
                    self.fail(f"{w.name}: {target} not ready again before the next fault")
                else:
                    w.recover_ready = max(0, last[1] - f["end"])
                    down = sum((s[1] or w.end) - max(s[0], f["start"]) for s in mine)
                    states = "/".join(sorted({s[2] for s in mine}))
                    w.readiness = f"{states} for {seconds(down)}"
            if f.get("dependency") and not mine:
                outage = (f["end"] - f["start"]) / 1000
                if outage < READINESS_WAIT:
                    # Each probe waits that long for its dependency: one back sooner was never down
                    # to a caller (its requests were answered: see the first acknowledged send).
                    self.notes.append(f"{w.name}: readiness stayed 200 through an outage of {outage:.1f} s, "
                                      f"shorter than the readiness probe's wait ({READINESS_WAIT:.0f} s)")
                else:
                    self.goal(f"{w.name}: serve's readiness stayed 200 during the outage (polled every 200 ms)")
            for t in targets:
                for s in spans[t]:
                    if self.overlaps(s, w):
                        end = "not again" if s[1] is None else clock(s[1])
                        self.readiness_notes.append(f"{w.name}: {t} {s[3]}, {clock(s[0])} – {end}")
        # Before the first fault nothing should have been unready once the load ran.
        first = self.windows[0]
        for t in targets:
            for s in spans[t]:
                if first.start <= s[0] and s[1] is not None and s[1] <= first.end:
                    self.notes.append(f"before the faults: {t} {s[3]} at {clock(s[0])}")

    # Job queues, outbox, processes

    def check_jobs(self):
        deadline = time.monotonic() + self.args.jobs_wait
        while True:
            state = {}
            for q in QUEUES:
                stream = f"parley:jobs:{{{q}}}"
                pending = self.store.redis_int("XPENDING", stream, "parley")
                state[q] = {
                    "waiting or in flight": self.store.redis_int("XLEN", stream),
                    "pending (read, not acknowledged)": pending,
                    "postponed": self.store.redis_int("ZCARD", f"{stream}:delayed"),
                    "dead": self.store.redis_int("XLEN", f"{stream}:dead"),
                }
            outbox = int(self.store.query("SELECT count(*) FROM messenger.outbox")[0][0])
            busy = outbox or any(v for s in state.values() for k, v in s.items() if k != "dead")
            if not busy or time.monotonic() > deadline:
                break
            time.sleep(1)
        self.jobs = state
        for q, s in state.items():
            for what, n in s.items():
                if n and what != "dead":
                    self.fail(f"queue {q}: {n} job(s) {what} after {self.args.jobs_wait} s")
            if s["dead"]:
                reasons = self.store.redis("XRANGE", f"parley:jobs:{{{q}}}:dead", "-", "+", "COUNT", "3")
                self.fail(f"queue {q}: {s['dead']} job(s) in the dead-letter stream, e.g. {reasons[:8]}")
        if outbox:
            self.fail(f"{outbox} outbox row(s) not relayed after {self.args.jobs_wait} s")

    def check_processes(self):
        processes = read_jsonl(os.path.join(self.dir, "processes.jsonl"))
        if not processes:
            self.fail("no processes.jsonl")
        for p in processes:
            name = p["process"]
            if not p.get("alive"):
                self.fail(f"{name} is not running at the end")
            if p.get("ready") not in (None, "200"):
                self.fail(f"{name} answers /health/ready with {p['ready'] or 'nothing'} at the end")
            if "pids" in p and len(p["pids"]) != 1 + len(p.get("killed", [])):
                self.fail(f"{name} was started {len(p['pids'])} times but killed {len(p.get('killed', []))} times")
        for i in read_jsonl(os.path.join(self.dir, "incidents.jsonl")):
            self.fail(f"{i['process']} exited unbidden (status {i.get('status', '?')}) during {i.get('during')} "
                      f"at {clock(i['t'])}; the run started it again")

