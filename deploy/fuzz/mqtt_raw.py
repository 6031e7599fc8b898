"""Raw MQTT 5 packets over a plain socket, for what paho refuses to send: malformed fixed
headers, wildcards and NUL in PUBLISH topics, 64 KiB topics, bad properties, packets out of
order. Every read has a timeout."""
import socket
import struct
import time

CONNECT, CONNACK, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP = 1, 2, 3, 4, 5, 6, 7
SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, PINGREQ, PINGRESP, DISCONNECT, AUTH = 8, 9, 10, 11, 12, 13, 14, 15
NAMES = {1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP",
         8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP",
         14: "DISCONNECT", 15: "AUTH"}


def varint(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def string(value):
    data = value if isinstance(value, bytes) else value.encode()
    return struct.pack(">H", len(data)) + data


def packet(kind, body, flags=0):
    return bytes([(kind << 4) | flags]) + varint(len(body)) + body


def connect(client_id, username=None, password=None, properties=b"", keepalive=30, level=5, name=b"MQTT"):
    flags = 0x02 | (0x80 if username is not None else 0) | (0x40 if password is not None else 0)
    body = string(name) + bytes([level, flags]) + struct.pack(">H", keepalive)
    body += varint(len(properties)) + properties if level == 5 else b""
    body += string(client_id)
    if username is not None:
        body += string(username)
    if password is not None:
        body += string(password)
    return packet(CONNECT, body)


def publish(topic, payload, qos=1, packet_id=1, properties=b"", retain=False):
    body = string(topic) + (struct.pack(">H", packet_id) if qos else b"") + varint(len(properties)) + properties
    return packet(PUBLISH, body + payload, flags=(qos << 1) | int(retain))


def subscribe(topic, options=1, packet_id=1):
    return packet(SUBSCRIBE, struct.pack(">H", packet_id) + b"\x00" + string(topic) + bytes([options]), flags=2)


class Connection:
    """One socket to the broker; read() returns (type, flags, body), or None once it closed."""

    def __init__(self, host, port, timeout=5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buffer = b""
        self.closed = False

    def send(self, data):
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def _fill(self, deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                return False
            self.buffer += chunk
            return True

    def read(self, timeout=3.0):
        """The next packet; None when the broker closed the connection; TimeoutError if nothing came."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= 2:
                length, shift, i = 0, 0, 1
                while i < len(self.buffer) and i <= 4:
                    length |= (self.buffer[i] & 0x7F) << shift
                    shift += 7
                    if not self.buffer[i] & 0x80:
                        break
                    i += 1
                if i < len(self.buffer) and len(self.buffer) >= i + 1 + length:
                    head, body = self.buffer[0], self.buffer[i + 1:i + 1 + length]
                    self.buffer = self.buffer[i + 1 + length:]
                    return head >> 4, head & 0x0F, body
            if self.closed or not self._fill(deadline):
                return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def reason_of(kind, body):
    """The reason code of an acknowledgement or DISCONNECT (0 when the packet carries none)."""
    if kind == CONNACK and len(body) >= 2:
        return body[1]
    if kind in (PUBACK, PUBREC, PUBREL, PUBCOMP) and len(body) >= 3:
        return body[2]
    if kind == DISCONNECT and body:
        return body[0]
    if kind == SUBACK and len(body) >= 4:
        properties_length = body[2]  # short property lists only
        return body[3 + properties_length] if len(body) > 3 + properties_length else 0
    return 0


def outcome(connection, timeout=3.0):
    """What the broker did with what was sent: 'closed', 'refused 0x87 (PUBACK)', 'answered ...', or 'silent'."""
    try:
        answer = connection.read(timeout)
    except TimeoutError:
        return "silent"
    if answer is None:
        return "closed"
    kind, _, body = answer
    code = reason_of(kind, body)
    name = NAMES.get(kind, str(kind))
    if kind == DISCONNECT or code >= 0x80 or (kind == CONNACK and code):  # 3.1.1 refusals are 1-5
        return f"refused 0x{code:02x} ({name})"
    return f"answered {name} 0x{code:02x}"


def session(host, port, account, timeout=5.0):
    """An authenticated MQTT 5 connection with an account's credentials (after its CONNACK)."""
    connection = Connection(host, port, timeout)
    mqtt = account.mqtt
    connection.send(connect(mqtt["clientId"], mqtt["username"], mqtt["password"]))
    answer = connection.read(timeout)
    if not answer or answer[0] != CONNACK or reason_of(*answer[::2]) != 0:
        connection.close()
        raise RuntimeError(f"raw CONNECT refused: {answer}")
    return connection
