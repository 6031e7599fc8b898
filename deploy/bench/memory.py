#!/usr/bin/env python3
"""Resident memory (VmRSS from /proc/PID/status) that idle connections cost.

Three phases, one after the other, each opening N connections, holding them idle for a few
seconds, reading the server's VmRSS, then closing them all (this process's descriptors must
fit under RLIMIT_NOFILE, so only one phase's connections are open at a time):

  serve     N TLS connections to parley serve's HTTPS listener, ALPN h2, the HTTP/2 preface
            and SETTINGS exchanged: RSS idle and with the connections open.
  broker    N MQTT 3.1.1 clients (clean session, keepalive 0) to mosquitto with Parley's
            plugin, each authenticated with its own token (users 1..N).
  baseline  the same N clients anonymously to plugin-less mosquitto.

Connection i binds to source address 127.0.0.{1 + i % sources}, so ephemeral ports do not
run out. Writes memory-serve.json and memory-broker.json (deploy/bench/report.py's format)
into --output-dir.

  deploy/bench/memory.py --serve-pid PID --https-port PORT \\
      --broker-pid PID --broker-port PORT --token-key BASE64 \\
      --baseline-pid PID --baseline-port PORT [--connections 10000] [--sources 4] --output-dir DIR
"""
import argparse
import asyncio
import base64
import collections
import hashlib
import hmac
import json
import os
import resource
import socket
import ssl
import struct
import sys
import time

IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # empty SETTINGS: length 0, type 4, flags 0, stream 0
H2_SETTINGS_ACK = bytes([0, 0, 0, 4, 1, 0, 0, 0, 0])
MQTT_DISCONNECT = b"\xe0\x00"
CONNECT_TIMEOUT = 30.0


class ProtocolError(Exception):
    pass


def rss_kib(pid):
    """The process's resident set size in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"process {pid} has no VmRSS (a zombie?)")


def socket_count(pid):
    """How many sockets the process has open (None if its descriptors cannot be listed)."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    count = 0
    for name in names:
        try:
            count += os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:")
        except OSError:
            pass
    return count


def raise_nofile_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# MQTT: the same tokens as deploy/bench/connect-storm makes.

def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(key, user, client):
    payload = b64u(f"{user}:{client}:{user}:{int(time.time()) + 3600}".encode())
    signing = f"v1.{payload}"
    return f"{signing}.{b64u(hmac.new(key, signing.encode(), hashlib.sha256).digest())}"


def mqtt_string(text):
    raw = text.encode()
    return struct.pack("!H", len(raw)) + raw


def connect_packet(client, user=None, password=None):
    """MQTT 3.1.1 CONNECT, clean session, keepalive 0 (the broker expects no pings)."""
    flags = 0x02 | (0x80 if user else 0) | (0x40 if password else 0)
    body = mqtt_string("MQTT") + bytes([4, flags]) + struct.pack("!H", 0) + mqtt_string(client)
    if user:
        body += mqtt_string(user)
    if password:
        body += mqtt_string(password)
    length, encoded = len(body), b""
    while True:
        byte, length = length % 128, length // 128
        encoded += bytes([byte | (0x80 if length else 0)])
        if not length:
            break
    return bytes([0x10]) + encoded + body


# Connections.

async def connected_socket(source, port):
    """A non-blocking TCP socket from source (port chosen at connect) to 127.0.0.1:port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        sock.bind((source, 0))
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        return sock
    except BaseException:
        sock.close()
        raise


def h2_opener(port):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])

    async def open_h2(i, source):
        sock = await connected_socket(source, port)
        try:
            reader, writer = await asyncio.open_connection(
                sock=sock, ssl=context, server_hostname="localhost",
                ssl_handshake_timeout=CONNECT_TIMEOUT, ssl_shutdown_timeout=5)
        except BaseException:
            sock.close()
            raise
        try:
            alpn = writer.get_extra_info("ssl_object").selected_alpn_protocol()
            if alpn != "h2":
                raise ProtocolError(f"ALPN {alpn!r}, not h2")
            writer.write(H2_PREFACE + H2_SETTINGS)
            await writer.drain()
            header = await reader.readexactly(9)  # the server's first frame must be SETTINGS
            if header[3] != 4:
                raise ProtocolError(f"first frame of type {header[3]}, not SETTINGS")
            await reader.readexactly(int.from_bytes(header[:3], "big"))
            writer.write(H2_SETTINGS_ACK)
            await writer.drain()
        except BaseException:
            writer.transport.abort()
            raise
        return reader, writer

    return open_h2


def mqtt_opener(port, packet_for):
    async def open_mqtt(i, source):
        sock = await connected_socket(source, port)
        try:
            reader, writer = await asyncio.open_connection(sock=sock)
        except BaseException:
            sock.close()
            raise
        try:
            writer.write(packet_for(i))
            await writer.drain()
            connack = await reader.readexactly(4)
            if connack[0] != 0x20:
                raise ProtocolError(f"packet type {connack[0] >> 4}, not CONNACK")
            if connack[3] != 0:
                raise ProtocolError(f"CONNACK return code {connack[3]}")
        except BaseException:
            writer.transport.abort()
            raise
        return reader, writer

    return open_mqtt


def describe(error):
    if isinstance(error, asyncio.TimeoutError):
        return "timeout"
    if isinstance(error, asyncio.IncompleteReadError):
        return "closed by the server"
    return f"{type(error).__name__}: {error}"


async def drain(reader):
    """Reads (and drops) what the server sends; returns once the connection ends."""
    try:
        while await reader.read(65536):
            pass
    except (ConnectionError, OSError, ssl.SSLError):
        pass


async def hold(name, pid, count, sources, concurrency, settle, opener, goodbye=b""):
    """Opens count connections, holds them idle, and returns the server's RSS around that."""
    before = rss_kib(pid)
    semaphore = asyncio.Semaphore(concurrency)
    connections, errors = [], collections.Counter()

    async def one(i):
        async with semaphore:
            try:
                connections.append(await asyncio.wait_for(opener(i, f"127.0.0.{1 + i % sources}"), CONNECT_TIMEOUT))
            except Exception as error:  # counted, the others go on
                errors[describe(error)] += 1

    start = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(count)))
    open_seconds = time.monotonic() - start
    watchers = [asyncio.create_task(drain(reader)) for reader, _ in connections]
    await asyncio.sleep(settle)
    dropped = sum(w.done() for w in watchers)  # closed by the server while idle
    after, sockets_after = rss_kib(pid), socket_count(pid)
    held = len(connections) - dropped
    if sockets_after is not None and sockets_after < held * 0.9:  # (some may still be closing from before)
        sys.exit(f"memory.py: process {pid} has {sockets_after} sockets open, fewer than the {held} "
                 f"connections held: is it the {name} server's PID?")

    for _, writer in connections:
        if goodbye and not writer.is_closing():
            writer.write(goodbye)
        writer.close()
    waits = asyncio.gather(*(w.wait_closed() for _, w in connections), return_exceptions=True)
    try:
        await asyncio.wait_for(waits, 30)
    except asyncio.TimeoutError:
        for _, writer in connections:
            writer.transport.abort()
    for w in watchers:
        w.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    await asyncio.sleep(1)  # let the server see the ends
    closed = rss_kib(pid)

    failures = sum(errors.values())
    phase = {
        "name": name, "requested": count, "held": held, "failures": failures, "dropped": dropped,
        "errors": dict(errors), "before_kib": before, "after_kib": after, "closed_kib": closed,
        "open_seconds": open_seconds,
        "kib_per_connection": (after - before) / held if held else None,
    }
    print(f"{name}: {held}/{count} connections held ({failures} failed, {dropped} dropped while idle) "
          f"opened in {open_seconds:.1f} s; RSS {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB "
          f"({fmt(phase['kib_per_connection'])} KiB each), "
          f"{closed / 1024:.1f} MiB after closing", flush=True)
    for message, n in errors.most_common(5):
        print(f"  {n} × {message}", flush=True)
    return phase


def mib(kib):
    return kib / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve-pid", type=int, required=True, help="parley serve's PID")
    parser.add_argument("--https-port", type=int, required=True, help="its HTTP/2 TLS port on 127.0.0.1")
    parser.add_argument("--broker-pid", type=int, required=True, help="PID of mosquitto with Parley's plugin")
    parser.add_argument("--broker-port", type=int, required=True, help="its plain MQTT port on 127.0.0.1")
    parser.add_argument("--token-key", required=True, help="the plugin's MQTT token key (base64)")
    parser.add_argument("--baseline-pid", type=int, required=True, help="PID of plugin-less mosquitto")
    parser.add_argument("--baseline-port", type=int, required=True, help="its MQTT port (anonymous allowed)")
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--sources", type=int, default=4, help="loopback source addresses 127.0.0.1..N")
    parser.add_argument("--concurrency", type=int, default=200, help="connection handshakes at once")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds idle before RSS is read")
    parser.add_argument("--output-dir", required=True)
    args = parser.parse_args()
    if not 1 <= args.sources <= 254:
        parser.error("--sources must be 1..254")

    n = args.connections
    limit = raise_nofile_limit()
    if limit != resource.RLIM_INFINITY and limit < n + 100:
        sys.exit(f"memory.py: RLIMIT_NOFILE is {limit}; {n} connections need at least {n + 100}")
    key = base64.b64decode(args.token_key)
    started = time.monotonic()

    async def run():
        serve = await hold("serve", args.serve_pid, n, args.sources, args.concurrency, args.settle,
                           h2_opener(args.https_port))

        def plugin_packet(i):
            user = i + 1
            client = f"parley-{user}-memory"
            return connect_packet(client, str(user), token(key, user, client))

        broker = await hold("broker (plugin)", args.broker_pid, n, args.sources, args.concurrency, args.settle,
                            mqtt_opener(args.broker_port, plugin_packet), MQTT_DISCONNECT)
        baseline = await hold("broker (plugin-less)", args.baseline_pid, n, args.sources, args.concurrency,
                              args.settle, mqtt_opener(args.baseline_port, lambda i: connect_packet(f"anon-{i}")),
                              MQTT_DISCONNECT)
        return serve, broker, baseline

    serve, broker, baseline = asyncio.run(run())
    sources = f"source addresses 127.0.0.1-127.0.0.{args.sources}"

    serve_result = {
        "scenario": "memory-serve",
        "title": f"Memory: parley serve, {n:,} idle HTTP/2 connections",
        "subject": {"label": f"parley serve with {n:,} idle h2 connections", "unit": "MiB",
                    "value": mib(serve["after_kib"])},
        "baseline": {"label": "the same process idle", "unit": "MiB", "value": mib(serve["before_kib"])},
        "ratio": serve["after_kib"] / serve["before_kib"],
        "notes": [
            f"{fmt(serve['kib_per_connection'])} KiB per idle HTTP/2 connection (TLS + h2 session)",
            "ratio: RSS with the connections over idle RSS (lower is better)",
            f"{serve['failures'] + serve['dropped']} connections failed",
            sources,
        ],
    }

    def absolute(label, phase):
        return (f"{label}: RSS {mib(phase['before_kib']):.1f} MiB idle, {mib(phase['after_kib']):.1f} MiB "
                f"with {phase['held']:,} clients")

    ratio = None
    if broker["kib_per_connection"] is not None and baseline["kib_per_connection"]:
        ratio = broker["kib_per_connection"] / baseline["kib_per_connection"]
    broker_result = {
        "scenario": "memory-broker",
        "title": f"Memory: mosquitto, {n:,} idle MQTT clients",
        "subject": {"label": "mosquitto + Parley plugin (token)", "unit": "KiB/conn",
                    "value": broker["kib_per_connection"]},
        "baseline": {"label": "plugin-less mosquitto (anonymous)", "unit": "KiB/conn",
                     "value": baseline["kib_per_connection"]},
        "ratio": ratio,
        "notes": [
            "ratio: per-client memory with Parley's plugin over plugin-less mosquitto (lower is better)",
            absolute("with the plugin", broker),
            absolute("plugin-less", baseline),
            f"{broker['failures'] + broker['dropped']} connections failed with the plugin, "
            f"{baseline['failures'] + baseline['dropped']} plugin-less",
            sources,
        ],
    }

    os.makedirs(args.output_dir, exist_ok=True)
    for result in (serve_result, broker_result):
        with open(os.path.join(args.output_dir, f"{result['scenario']}.json"), "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")

    print()
    print(f"parley serve: {mib(serve['before_kib']):.1f} MiB idle, {mib(serve['after_kib']):.1f} MiB with "
          f"{serve['held']:,} idle h2 connections: {fmt(serve['kib_per_connection'])} KiB each")
    print(f"mosquitto + plugin: {fmt(broker['kib_per_connection'])} KiB per client; plugin-less: "
          f"{fmt(baseline['kib_per_connection'])} KiB per client; ratio {fmt(ratio)}")
    print(f"({time.monotonic() - started:.0f} s; results in {args.output_dir})")
    failed = sum(p["failures"] + p["dropped"] for p in (serve, broker, baseline))
    if failed:
        print(f"warning: {failed} connections failed or were dropped (see above); "
              "the per-connection figures count only those held")
    return 0


def fmt(value):
    return "–" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    sys.exit(main())
