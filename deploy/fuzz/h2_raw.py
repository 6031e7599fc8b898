"""Raw HTTP/2 frames over TLS (ALPN h2), for what a well-behaved library will not send:
streams reset as soon as opened, CONTINUATION without end, more streams than the server
allows. Header blocks use literal fields without indexing only, so no HPACK state is shared
and a block can be sent any number of times. Every read has a timeout."""
import collections
import select
import socket
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
CANCEL = 0x8


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _integer(value, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = bytearray([first | limit]), value - limit
    while value >= 128:
        out.append((value % 128) | 0x80)
        value //= 128
    out.append(value)
    return bytes(out)


def _string(data):
    data = data if isinstance(data, bytes) else data.encode()
    return _integer(len(data), 7) + data


def literal(name, value):
    """A header field as a literal without indexing, with a literal name."""
    return b"\x00" + _string(name) + _string(value)


def request_block(authority, method="GET", path="/health/live"):
    """:method, :scheme https, :path and :authority; static-table names, literal values."""
    methods = {"GET": b"\x82", "POST": b"\x83"}
    return methods[method] + b"\x87" + _integer(4, 4) + _string(path) + _integer(1, 4) + _string(authority)


class Connection:
    """One TLS connection speaking raw HTTP/2; counts what the server sends back."""

    def __init__(self, stack, timeout=5.0):
        context = stack.ssl_context(alpn=["h2"])
        raw = socket.create_connection(("127.0.0.1", stack.https_port), timeout=timeout)
        self.sock = context.wrap_socket(raw, server_hostname=stack.https_host)
        if self.sock.selected_alpn_protocol() != "h2":
            raise RuntimeError(f"ALPN chose {self.sock.selected_alpn_protocol()}, not h2")
        self.authority = f"{stack.https_host}:{stack.https_port}"
        self.buffer = b""
        self.received = collections.Counter()  # frame type -> count
        self.goaway = None                    # the error code of the server's GOAWAY
        self.closed = False                   # the server closed it (read end)
        self.refused = False                  # a write failed: the server stopped reading
        self.sent_bytes = 0
        self.send(PREFACE + frame(SETTINGS, 0, 0))

    def send(self, data):
        if self.closed or self.refused:
            return False
        try:
            self.sock.sendall(data)
            self.sent_bytes += len(data)
            return True
        except OSError:
            self.refused = True
            return False

    def pump(self, wait=0.0):
        """Reads what has arrived (waiting up to `wait` seconds for the first bytes)."""
        while not self.closed:
            ready = self.sock.pending() or select.select([self.sock], [], [], wait)[0]
            if not ready:
                return
            wait = 0.0
            try:
                chunk = self.sock.recv(65536)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                self.closed = True
                return
            self.buffer += chunk
            self._frames()

    def _frames(self):
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                return
            kind, flags = self.buffer[3], self.buffer[4]
            payload = self.buffer[9:9 + length]
            self.buffer = self.buffer[9 + length:]
            self.received[kind] += 1
            if kind == SETTINGS and not flags & ACK:
                self.send(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                self.send(frame(PING, ACK, 0, payload))
            elif kind == GOAWAY and len(payload) >= 8:
                self.goaway = int.from_bytes(payload[4:8], "big")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        self.closed = True
