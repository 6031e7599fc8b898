#!/usr/bin/env python3
"""A loopback TCP proxy that can cut the network between Parley and one of its services.

    proxy.py serve --listen PORT --target PORT [--name NAME] [--mode blackhole|drop]
                   [--control SOCKET] [--pid-file FILE]
    proxy.py control SOCKET partition [blackhole|drop] | heal | status

`serve` forwards every connection made to 127.0.0.1:PORT to 127.0.0.1:TARGET until it is
partitioned: by SIGUSR1 (in --mode) or the control command `partition [MODE]`. SIGUSR2 or
`heal` ends the partition.

blackhole (the default), like packets silently lost: existing connections stay open but no
    byte passes either way (what was read when the partition began is held, the rest waits in
    the kernel's buffers); new connections are not accepted (they wait in the listen backlog,
    then their SYNs go unanswered). On heal everything held moves on, as TCP retransmission
    would deliver it.
drop, like a firewall that rejects: existing connections are reset on both sides, new ones
    are accepted and reset at once.

Events go to stderr with wall-clock times; `status` answers one JSON line. Loopback only.
"""

import argparse
import asyncio
import json
import os
import signal
import socket
import struct
import sys
import time

MODES = ("blackhole", "drop")


def now_ms():
    return int(time.time() * 1000)


def stamp():
    t = time.time()
    return time.strftime("%H:%M:%S", time.localtime(t)) + ".%03d" % (int(t * 1000) % 1000)


def reset(sock_or_transport):
    """Closes with a TCP RST (SO_LINGER 0) instead of a FIN: what a rejecting firewall sends."""
    sock = sock_or_transport
    if hasattr(sock_or_transport, "get_extra_info"):
        sock = sock_or_transport.get_extra_info("socket")
    try:
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    if hasattr(sock_or_transport, "abort"):
        sock_or_transport.abort()
    elif sock is not None:
        sock.close()


class Connection:
    def __init__(self, number):
        self.number = number
        self.writers = []
        self.dropped = False

    def drop(self):
        self.dropped = True
        for writer in self.writers:
            reset(writer.transport)


class Proxy:
    def __init__(self, name, listen, target, mode, connect_timeout=5.0):
        self.name = name
        self.listen = listen
        self.target = target
        self.mode = mode
        self.connect_timeout = connect_timeout
        self.open = asyncio.Event()
        self.open.set()
        self.partition_mode = None
        self.partitioned_at = None
        self.connections = set()
        self.accepted = 0
        self.refused = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self.partitions = []

    def log(self, message):
        print(f"{stamp()} {self.name}: {message}", file=sys.stderr, flush=True)

    # Partition and heal

    def partition(self, mode=None):
        mode = mode or self.mode
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode}")
        if not self.open.is_set():
            return f"already partitioned ({self.partition_mode})"
        self.open.clear()
        self.partition_mode = mode
        self.partitioned_at = now_ms()
        held = len(self.connections)
        if mode == "drop":
            for connection in list(self.connections):
                connection.drop()
        self.log(f"partitioned ({mode}); {held} connection(s) {'reset' if mode == 'drop' else 'held'}")
        return "partitioned"

    def heal(self):
        if self.open.is_set():
            return "not partitioned"
        duration = now_ms() - self.partitioned_at
        self.partitions.append({"mode": self.partition_mode, "start": self.partitioned_at, "end": now_ms()})
        self.open.set()
        self.partition_mode = None
        self.partitioned_at = None
        self.log(f"healed after {duration / 1000:.2f} s; {len(self.connections)} connection(s) open")
        return "healed"

    def status(self):
        return {
            "name": self.name,
            "listen": self.listen,
            "target": self.target,
            "partitioned": not self.open.is_set(),
            "mode": self.partition_mode,
            "since": self.partitioned_at,
            "connections": len(self.connections),
            "accepted": self.accepted,
            "refused": self.refused,
            "bytes_up": self.bytes_up,
            "bytes_down": self.bytes_down,
            "partitions": self.partitions,
        }

    # Forwarding

    async def serve(self):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.listen))
        listener.listen(1024)
        listener.setblocking(False)
        loop = asyncio.get_running_loop()
        self.log(f"listening on 127.0.0.1:{self.listen}, forwarding to 127.0.0.1:{self.target}")
        number = 0
        while True:
            # A blackhole accepts nothing: new connections wait in the kernel's backlog.
            if not self.open.is_set() and self.partition_mode == "blackhole":
                await self.open.wait()
                continue
            try:
                client, _ = await loop.sock_accept(listener)
            except OSError as error:  # out of descriptors, say: the proxy must not end
                self.log(f"accept failed: {error}")
                await asyncio.sleep(0.1)
                continue
            number += 1
            self.accepted += 1
            if not self.open.is_set() and self.partition_mode == "drop":
                self.refused += 1
                reset(client)
                continue
            asyncio.create_task(self.forward(client, number))

    async def forward(self, client, number):
        connection = Connection(number)
        self.connections.add(connection)
        client_writer = None
        try:
            # Small writes pass at once, as they would without the proxy (no Nagle delay).
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client_reader, client_writer = await asyncio.open_connection(sock=client)
            connection.writers.append(client_writer)
            # Accepted as a blackhole began: it waits like one in the backlog.
            await self.open.wait()
            if connection.dropped:
                return
            try:
                upstream_reader, upstream_writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.target), self.connect_timeout)
            except (OSError, asyncio.TimeoutError) as error:
                # The service is down (a restart): the client sees its connection reset.
                self.refused += 1
                self.log(f"connection {number}: upstream unavailable ({error.__class__.__name__}); reset")
                reset(client_writer.transport)
                return
            connection.writers.append(upstream_writer)
            upstream_writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if connection.dropped:
                return
            up = asyncio.create_task(self.pump(client_reader, upstream_writer, connection, "up"))
            down = asyncio.create_task(self.pump(upstream_reader, client_writer, connection, "down"))
            # Either side closing ends both (PostgreSQL and Redis do not half-close).
            done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        except Exception as error:  # one connection's failure must not end the proxy
            self.log(f"connection {number}: {error!r}")
        finally:
            self.connections.discard(connection)
            for writer in connection.writers:
                if not connection.dropped:
                    writer.close()

    async def pump(self, reader, writer, connection, direction):
        try:
            while True:
                await self.open.wait()
                data = await reader.read(65536)
                if not data or connection.dropped:
                    return
                # Read just as a partition began: held until it heals, not passed.
                await self.open.wait()
                if connection.dropped:
                    return
                writer.write(data)
                await writer.drain()
                if direction == "up":
                    self.bytes_up += len(data)
                else:
                    self.bytes_down += len(data)
        except (ConnectionError, OSError):
            return

    # Control socket

    async def control(self, reader, writer):
        try:
            line = (await asyncio.wait_for(reader.readline(), 5)).decode(errors="replace").split()
            if not line:
                answer = {"error": "empty command"}
            elif line[0] == "partition":
                answer = {"result": self.partition(line[1] if len(line) > 1 else None)}
            elif line[0] == "heal":
                answer = {"result": self.heal()}
            elif line[0] == "status":
                answer = self.status()
            else:
                answer = {"error": f"unknown command {line[0]}"}
        except (ValueError, asyncio.TimeoutError) as error:
            answer = {"error": str(error)}
        writer.write((json.dumps(answer) + "\n").encode())
        try:
            await writer.drain()
        finally:
            writer.close()


async def serve(args):
    proxy = Proxy(args.name or f"proxy:{args.listen}", args.listen, args.target, args.mode)
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, proxy.partition)
    loop.add_signal_handler(signal.SIGUSR2, proxy.heal)
    loop.add_signal_handler(signal.SIGTERM, stopped.set)
    loop.add_signal_handler(signal.SIGINT, stopped.set)
    control = None
    if args.control:
        if os.path.exists(args.control):
            os.unlink(args.control)
        control = await asyncio.start_unix_server(proxy.control, path=args.control)
    if args.pid_file:
        with open(args.pid_file, "w") as f:
            f.write(f"{os.getpid()}\n")
    server = asyncio.create_task(proxy.serve())
    done, _ = await asyncio.wait({server, asyncio.create_task(stopped.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if server in done:
        server.result()  # the listener failed (port taken): raise it
    server.cancel()
    for connection in list(proxy.connections):
        connection.drop()
    if control:
        control.close()
        os.unlink(args.control)
    proxy.log(f"stopped; {proxy.accepted} connection(s) accepted, {len(proxy.partitions)} partition(s)")


def control(args):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(args.socket)
        s.sendall((" ".join(args.command) + "\n").encode())
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    print(answer.decode().strip())
    return 1 if "error" in json.loads(answer or b"{}") else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("serve", help="run the proxy")
    s.add_argument("--listen", type=int, required=True, help="port to listen on (127.0.0.1)")
    s.add_argument("--target", type=int, required=True, help="port to forward to (127.0.0.1)")
    s.add_argument("--name", help="name in the log")
    s.add_argument("--mode", choices=MODES, default="blackhole", help="what SIGUSR1 does (default blackhole)")
    s.add_argument("--control", help="a Unix socket for control commands")
    s.add_argument("--pid-file")
    c = commands.add_parser("control", help="send a command to a running proxy")
    c.add_argument("socket")
    c.add_argument("command", nargs="+", help="partition [blackhole|drop] | heal | status")
    args = parser.parse_args()
    if args.command == "serve":
        asyncio.run(serve(args))
        return 0
    return control(args)


if __name__ == "__main__":
    sys.exit(main())
