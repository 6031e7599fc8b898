"""What a chaos run recorded, read back, and the figures the checks hold it to (verify.py)."""

import json
import os
import sys
import time

GOAL_SECONDS = 10
# How long /health/ready waits for each dependency (PARLEY_HTTP_READINESS_TIMEOUT's default).
READINESS_WAIT = 2.0
QUEUES = ("fanout", "push", "media", "maintenance", "webhooks")


def read_jsonl(path):
    """JSON lines; a half-written last line (the writer was killed) is skipped."""
    records = []
    if not os.path.exists(path):
        return records
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                print(f"warning: {path}:{number}: not JSON, skipped", file=sys.stderr)
    return records


def read_json(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def seconds(ms):
    return "–" if ms is None else f"{ms / 1000:.1f} s"


def clock(ms):
    return time.strftime("%H:%M:%S", time.localtime(ms / 1000)) + f".{ms % 1000:03d}"
