#!/usr/bin/env python3
"""Merges scenario results into deploy/bench/results/latest.json and renders latest.md.

Each scenario's JSON has a subject (Parley) and a baseline, each either a rate ladder
(steps; the best passing step is the figure) or a single value. A scenario run again
replaces its earlier entry; the others stay, each with the date and machine of its run.
"""
import argparse, datetime, json, os

# Server CPU per operation is read at a fixed offered rate that every machine sustains, where
# the per-batch costs still show (issue 52's goals); the server is what Parley runs.
GOAL_RATES = {"chat-2": 1000, "chat-2-hook": 1000, "chat-many": 1000, "chat-100": 40, "rest-rooms": 500,
              "rest-messages": 500, "synapse": 1000}
SERVER = ("serve", "worker", "postgres", "redis")

ORDER = ["chat-2", "chat-2-hook", "chat-100", "chat-many", "rest-rooms", "rest-messages", "connect-storm", "fanout", "memory-serve", "memory-broker", "synapse", "search"]


def figure(side):
    """The side's figure and the step it came from (None for single values)."""
    steps = side.get("steps")
    if steps is None:
        return side.get("value"), None
    passed = [s for s in steps if s["passed"]]
    if not passed:
        return 0, None
    best = max(passed, key=lambda s: s["achievedRate"])
    return best["achievedRate"], best


def server_cpu(name, side):
    """Server CPU µs per operation (serve + worker + PostgreSQL + Redis) at the scenario's goal
    rate, and each process's share: the step last offered at that rate (a retried step's
    second try), passed or not."""
    rate = GOAL_RATES.get(name)
    steps = [s for s in side.get("steps") or [] if s["offeredRate"] == rate]
    if not steps or not steps[-1].get("cpuSecondsPerOperation"):
        return "–"
    step = steps[-1]
    cpu = step["cpuSecondsPerOperation"]
    total = sum(cpu.get(process, 0) for process in SERVER)
    failed = "" if step["passed"] else ", failed"
    each = ", ".join(f"{process} {cpu.get(process, 0) * 1e6:,.0f}" for process in SERVER)
    return f"**{total * 1e6:,.0f} µs** at {rate:,} {side['unit']}{failed} ({each})"


def number(value, unit):
    if value is None:
        return "–"
    if unit in ("MiB", "KiB/conn", "s"):
        return f"{value:,.2f} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    if value < 100 and not unit.endswith("/s"):
        return f"{value:,.1f} {unit}"
    return f"{value:,.0f} {unit}"


def latency(step):
    if not step:
        return "–"
    lat = step["latency"]
    return f"{lat['p50']:.2f} / {lat['p99']:.2f} / {lat['p999']:.2f}"


def health(step):
    """`/health/live` p50 / p99 / max ms of each sampled process during a ladder step."""
    if not step or not step.get("health"):
        return "–"
    parts = []
    for name, probes in sorted(step["health"].items()):
        lat = probes["latency"]
        failed = f" ({probes['failures']} failed)" if probes.get("failures") else ""
        parts.append(f"{name} {lat['p50']:.2f} / {lat['p99']:.2f} / {lat['max']:.2f}{failed}")
    return "; ".join(parts)


def health_per_step(side):
    """One note: the p99 of each sampled `/health/live` at every offered rate of a ladder."""
    steps = [s for s in side.get("steps") or [] if s.get("health")]
    if not steps:
        return None
    names = sorted(steps[0]["health"])
    rates = ", ".join(
        f"{s['offeredRate']:,.0f}{'' if s['passed'] else ' (failed)'}: "
        + " / ".join(f"{s['health'][n]['latency']['p99']:.2f}" for n in names if n in s["health"])
        for s in steps)
    return f"/health/live p99 ms ({' / '.join(names)}) per offered {side['unit']}: {rates}"


def cpu(source):
    """CPU µs per operation of each process, from a ladder's step or a single-value side."""
    if not source or not source.get("cpuSecondsPerOperation"):
        return ""
    parts = sorted(source["cpuSecondsPerOperation"].items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name} {seconds * 1e6:,.0f}" for name, seconds in parts if seconds > 0)


def requests(step):
    """Requests each counted server received per operation (data segments on its port)."""
    if not step or not step.get("requestsPerOperation"):
        return ""
    parts = sorted(step["requestsPerOperation"].items())
    return ", ".join(f"{name} {count:,.1f}" for name, count in parts)


def render(entries):
    lines = [
        "# Latest benchmark results",
        "",
        "Written by `deploy/bench/run`; each row is the newest run of its scenario. A rate is the",
        "highest offered rate whose p99 stayed within the goal with nothing lost (open loop: latency",
        "counts from the intended send time). The baseline ran in the same run on the same machine;",
        "each scenario's notes say how its ratio reads. Server CPU is serve + worker + PostgreSQL +",
        "Redis per operation at a fixed offered rate (the same on every machine), from the same run.",
        "",
        "| scenario | server CPU per operation | Parley | baseline | ratio | Parley p50 / p99 / p99.9 ms | baseline p50 / p99 / p99.9 ms "
        "| Parley's /health/live p50 / p99 / max ms at that rate | run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    details = []
    names = sorted(entries, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
    for name in names:
        entry = entries[name]
        unit = entry["subject"]["unit"]
        subject, subject_step = figure(entry["subject"])
        base, base_step = figure(entry["baseline"])
        ratio = entry.get("ratio")
        lines.append(
            f"| **{entry['title']}** | {server_cpu(name, entry['subject'])} | {number(subject, unit)} | {number(base, entry['baseline']['unit'])} | "
            f"{'–' if ratio is None else f'{ratio:.2f}'} | {latency(subject_step)} | {latency(base_step)} | "
            f"{health(subject_step)} | {entry['date']} |")
        notes = list(entry.get("notes", []))
        per_step = health_per_step(entry["subject"])
        if per_step:
            notes.append(per_step)
        subject_cpu = cpu(subject_step or entry["subject"])
        base_cpu = cpu(base_step or entry["baseline"])
        if subject_cpu:
            notes.append(f"CPU µs per operation, Parley side: {subject_cpu}")
        if base_cpu:
            notes.append(f"CPU µs per operation, baseline side: {base_cpu}")
        subject_requests = requests(subject_step)
        if subject_requests:
            notes.append(f"requests received per operation (round trips, data segments on each server's port): "
                         f"{subject_requests}")
        details.append((entry["title"], entry["machine"], notes))
    lines += ["", "## Notes per scenario", ""]
    for title, machine, notes in details:
        lines.append(f"- **{title}** ({machine})")
        lines += [f"  - {note}" for note in notes]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--machine", required=True)
    parser.add_argument("--results", required=True, help="directory of this run's scenario JSON files")
    parser.add_argument("--into", required=True, help="deploy/bench/results")
    args = parser.parse_args()
    latest_path = os.path.join(args.into, "latest.json")
    entries = {}
    if os.path.exists(latest_path):
        with open(latest_path) as f:
            entries = json.load(f)["scenarios"]
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    for file in sorted(os.listdir(args.results)):
        if not file.endswith(".json"):
            continue
        with open(os.path.join(args.results, file)) as f:
            result = json.load(f)
        result["date"] = today
        result["machine"] = args.machine
        entries[result["scenario"]] = result
    with open(latest_path, "w") as f:
        json.dump({"scenarios": entries}, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(args.into, "latest.md"), "w") as f:
        f.write(render(entries))
    print(render(entries))


if __name__ == "__main__":
    main()
