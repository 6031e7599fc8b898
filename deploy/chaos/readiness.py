#!/usr/bin/env python3
"""Polls health endpoints and logs every change of their answer, with the time it was seen.

    readiness.py --out FILE [--interval 0.2] [--timeout 3] [--max-seconds 3600] NAME=URL ...

Each URL is polled in its own thread (a readiness check that waits for a dependency's timeout
does not delay the others) every --interval seconds until SIGTERM or SIGINT (or
--max-seconds). FILE gets a JSON line per transition:

    {"target": "serve", "t": 1764110000123, "answered": 1764110002125, "state": "503",
     "detail": "redis timeout", "polls": 412}

state: the HTTP status ("200", "503", ...), or "down" when nothing answered (refused, reset,
timed out; the detail says which). t is when the poll that saw it was sent, answered when its
answer came (unix ms; a readiness check waits up to 2 s for a dependency that does not answer,
so a spell of 503 begins by t, and one of 200 is certain only by answered). At the end each
target gets {"target": ..., "t": ..., "end": true, "polls": n}.
"""

import argparse
import http.client
import json
import signal
import sys
import threading
import time
import urllib.parse


def now_ms():
    return int(time.time() * 1000)


def failing_checks(body):
    """The dependencies a 503 names ("checks": {"postgres": "down", ...}), as 'postgres down'."""
    try:
        checks = json.loads(body).get("checks") or {}
        return ", ".join(f"{name} {status}" for name, status in sorted(checks.items()) if status != "up")
    except (ValueError, AttributeError):
        return body[:200]


def poll(url, timeout):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request("GET", parts.path or "/")
        response = connection.getresponse()
        body = response.read(65536).decode(errors="replace")
        detail = "" if response.status == 200 else failing_checks(body)
        return str(response.status), detail
    except TimeoutError:
        return "down", "timed out"
    except (ConnectionError, OSError, http.client.HTTPException) as error:
        return "down", error.__class__.__name__
    finally:
        connection.close()


class Log:
    def __init__(self, path):
        self.file = open(path, "a")
        self.lock = threading.Lock()

    def write(self, record):
        with self.lock:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()


def watch(name, url, args, log, stop):
    last = None
    polls = 0
    while not stop.is_set():
        started = time.monotonic()
        t = now_ms()
        state, detail = poll(url, args.timeout)
        polls += 1
        if (state, detail if state != "200" else "") != last:
            last = (state, detail if state != "200" else "")
            log.write({"target": name, "t": t, "answered": now_ms(), "state": state, "detail": detail,
                       "polls": polls})
        stop.wait(max(0.0, args.interval - (time.monotonic() - started)))
    log.write({"target": name, "t": now_ms(), "end": True, "polls": polls})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per request")
    parser.add_argument("--max-seconds", type=float, default=3600, help="stop by itself after this long")
    parser.add_argument("targets", nargs="+", metavar="NAME=URL")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    log = Log(args.out)
    threads = []
    for target in args.targets:
        name, _, url = target.partition("=")
        if not url:
            parser.error(f"{target}: expected NAME=URL")
        thread = threading.Thread(target=watch, args=(name, url, args, log, stop), daemon=True)
        thread.start()
        threads.append(thread)
    stop.wait(args.max_seconds)
    stop.set()
    for thread in threads:
        thread.join(args.timeout + 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
