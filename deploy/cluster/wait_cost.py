#!/usr/bin/env python3
"""What PARLEY_REDIS_WAIT_REPLICAS=1 costs a job queue write, on the cluster's Redis: the time
of an XADD alone and of an XADD followed by WAIT 1 (what Parley sends for each batch of jobs it
queues), each over one connection, N times, p50 and p99 in milliseconds, as a table row.

    wait_cost.py --port PRIMARY_PORT [--count N]      (password: REDISCLI_AUTH)"""

import argparse
import os
import socket
import sys
import time


class Redis:
    def __init__(self, port, password):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        if password:
            self.call("AUTH", password)

    def call(self, *words):
        data = f"*{len(words)}\r\n".encode() + b"".join(
            f"${len(w.encode())}\r\n".encode() + w.encode() + b"\r\n" for w in words)
        self.socket.sendall(data)
        return self.reply()

    def line(self):
        while b"\r\n" not in self.buffer:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("Redis closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            length = int(rest)
            if length < 0:
                return None
            while len(self.buffer) < length + 2:
                chunk = self.socket.recv(65536)
                if not chunk:
                    raise ConnectionError("Redis closed the connection")
                self.buffer += chunk
            value, self.buffer = self.buffer[:length], self.buffer[length + 2:]
            return value
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        return rest


def percentiles(samples):
    samples = sorted(samples)
    return samples[len(samples) // 2] * 1000, samples[int(len(samples) * 0.99)] * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    redis = Redis(args.port, os.environ.get("REDISCLI_AUTH"))
    stream = "parley:bench:{wait-cost}"
    alone, waited, short = [], [], 0
    for i in range(args.count):
        start = time.perf_counter()
        redis.call("XADD", stream, "MAXLEN", "~", "1000", "*", "job", "x" * 200)
        alone.append(time.perf_counter() - start)
        start = time.perf_counter()
        redis.call("XADD", stream, "MAXLEN", "~", "1000", "*", "job", "x" * 200)
        short += int(redis.call("WAIT", "1", "1000")) < 1
        waited.append(time.perf_counter() - start)
    redis.call("DEL", stream)
    (a50, a99), (w50, w99) = percentiles(alone), percentiles(waited)
    print(f"| a job queue write (XADD, 200 bytes) | {a50:.3f} | {a99:.3f} | {w50:.3f} | {w99:.3f} | "
          f"{w50 - a50:+.3f} | {short} of {args.count} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
