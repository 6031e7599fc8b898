#!/usr/bin/env python3
"""The cluster run's report (deploy/cluster/run): the fault table verify.py wrote, each
failover's time, and the throughput of the cluster next to one process's from the same run.

    report.py --out DIR --machine TEXT --status N

DIR holds verify.md, faults.jsonl and the benchmark results in one-process/ and cluster/
(parley-load's NAME.json: chat-2, rest-rooms, rest-messages)."""

import argparse
import json
import os
import sys
import time

SCENARIOS = [("chat-2", "chat, rooms of 2 (MQTT in, MQTT out)", "msg/s"),
             ("rest-rooms", "REST GET /v1/rooms", "req/s"),
             ("rest-messages", "REST POST /v1/rooms/{id}/messages", "req/s")]


def best(path):
    """The sustained step (the highest achieved rate among the passing ones), or None."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        steps = json.load(f)["subject"].get("steps") or []
    passed = [s for s in steps if s.get("passed")]
    return max(passed, key=lambda s: s["achievedRate"]) if passed else None


def cpu(step):
    """Milliseconds of CPU per operation: all servers, and each process."""
    per = {k: v * 1000 for k, v in step["cpuSecondsPerOperation"].items() if k != "parley-load"}
    detail = ", ".join(f"{k} {v:.2f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1]) if v >= 0.005)
    return sum(per.values()), detail


def throughput(out):
    lines = ["| scenario | one process | cluster | cluster / one | server CPU ms per op: one process | cluster |",
             "|---|---|---|---|---|---|"]
    details = []
    for name, title, unit in SCENARIOS:
        one, many = best(f"{out}/one-process/{name}.json"), best(f"{out}/cluster/{name}.json")
        if one is None and many is None:
            continue

        def rate(step):
            if step is None:
                return "–"
            return f"{step['achievedRate']:.0f} {unit} (p99 {step['latency']['p99']:.1f} ms)"
        ratio = f"{many['achievedRate'] / one['achievedRate']:.2f}" if one and many else "–"
        one_cpu, one_detail = cpu(one) if one else (None, "")
        many_cpu, many_detail = cpu(many) if many else (None, "")
        lines.append(f"| {title} | {rate(one)} | {rate(many)} | {ratio} | "
                     f"{'–' if one_cpu is None else f'{one_cpu:.2f}'} | {'–' if many_cpu is None else f'{many_cpu:.2f}'} |")
        details += [f"- {title}, one process: {one_detail or '–'}", f"- {title}, cluster: {many_detail or '–'}"]
    if len(lines) == 2:
        return "(no benchmark ran)"
    return "\n".join(lines + ["", "CPU per operation by process (ms), at the sustained step:"] + details)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--status", type=int, required=True)
    args = parser.parse_args()
    print(f"# Cluster run ({time.strftime('%Y-%m-%d', time.gmtime())}, {args.machine})")
    print()
    print("PostgreSQL primary + streaming replica, Redis primary + replica + 3 Sentinels, mosquitto with "
          "Parley's plugin, HAProxy in front of 2 `parley serve` (HTTP/2 over TLS), 2 `parley worker` "
          "with every role; everything on this machine. Reproduce: `deploy/cluster/run`.")
    print()
    print("## Throughput: the cluster next to one process (same run, same stores)")
    print()
    print(throughput(args.out))
    print()
    if os.path.exists(f"{args.out}/wait-cost.md"):
        print("## What `PARLEY_REDIS_WAIT_REPLICAS=1` costs (2,000 writes on one connection, ms)")
        print()
        print("| write | alone p50 | alone p99 | with WAIT 1 p50 | with WAIT 1 p99 | added p50 | replica short |")
        print("|---|---|---|---|---|---|---|")
        with open(f"{args.out}/wait-cost.md") as f:
            print(f.read().rstrip())
        print()
    print("## Faults under load")
    print()
    faults = []
    if os.path.exists(f"{args.out}/faults.jsonl"):
        with open(f"{args.out}/faults.jsonl") as f:
            faults = [json.loads(line) for line in f if line.strip()]
    for fault in faults:
        if "failover_ms" in fault:
            print(f"- {fault['fault']}: the Sentinels promoted the replica {fault['failover_ms'] / 1000:.1f} s "
                  "after the kill")
    if os.path.exists(f"{args.out}/after.md"):
        print()
        print("After the faults:")
        print()
        with open(f"{args.out}/after.md") as f:
            print(f.read().rstrip())
    if os.path.exists(f"{args.out}/verify.md"):
        with open(f"{args.out}/verify.md") as f:
            print()
            print(f.read().rstrip())
    print()
    print("PASSED" if args.status == 0 else f"FAILED (status {args.status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
