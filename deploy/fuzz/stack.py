"""The stack under test, fresh accounts and rooms on it, and MQTT v5 clients (through common.py).

The stack is described by the environment (deploy/fuzz/run sets it; deploy/fuzz/stack-env DIR
prints it for a stack that is already running):

  PARLEY_FUZZ_HTTPS_URL   https://localhost:8443 (required)
  PARLEY_FUZZ_HTTP_URL    http://127.0.0.1:8080, the cleartext listener (optional)
  PARLEY_FUZZ_CA          the CA certificate of the HTTPS listener
  PARLEY_FUZZ_MQTT_HOST   MQTT without TLS, default 127.0.0.1
  PARLEY_FUZZ_MQTT_PORT
  PARLEY_FUZZ_DATA_DIR    the stack's data directory: run/*.pid, logs/, mosquitto/, parley.env
  PARLEY_FUZZ_BIN         the parley binary (default: the running serve's own, /proc/PID/exe,
                          so a rebuild in progress in .build does not matter)

Accounts: one administrator made with `parley user create --admin` (the CLI, against the data
directory's parley.env), the others by that administrator over REST, so the per-address
registration limit is not in the way; without the CLI users self-register.
"""
import dataclasses
import ipaddress
import json
import os
import secrets
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

import httpx
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes

PASSWORD_BYTES = 12
HTTP_TIMEOUT = 15.0
# The harness's own requests (accounts, rooms, logins) come from this loopback address: the
# server rate-limits login and registration per client address, and the fuzzed requests
# (from 127.0.0.1) exhaust those limits on purpose.
HARNESS_ADDRESS = os.environ.get("PARLEY_FUZZ_HARNESS_ADDRESS", "127.0.0.2")
# Requests answered 429 are retried after Retry-After, but never for longer than this.
RATE_LIMIT_PATIENCE = 75.0


# --- the stack -------------------------------------------------------------------------------

def require_loopback(host):
    """Fuzzing is for the local stack only: refuse any other address."""
    if host == "localhost":
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    sys.exit(f"refusing to fuzz {host}: loopback addresses only")


@dataclasses.dataclass
class Stack:
    https_url: str
    http_url: str | None
    ca: str | None
    mqtt_host: str
    mqtt_port: int
    data_dir: str | None
    binary: str | None

    @classmethod
    def from_env(cls):
        https_url = os.environ.get("PARLEY_FUZZ_HTTPS_URL")
        if not https_url:
            sys.exit("PARLEY_FUZZ_HTTPS_URL is not set (deploy/fuzz/run sets it; see deploy/fuzz/stack-env)")
        stack = cls(
            https_url=https_url.rstrip("/"),
            http_url=(os.environ.get("PARLEY_FUZZ_HTTP_URL") or "").rstrip("/") or None,
            ca=os.environ.get("PARLEY_FUZZ_CA") or None,
            mqtt_host=os.environ.get("PARLEY_FUZZ_MQTT_HOST", "127.0.0.1"),
            mqtt_port=int(os.environ.get("PARLEY_FUZZ_MQTT_PORT", "1883")),
            data_dir=os.environ.get("PARLEY_FUZZ_DATA_DIR") or None,
            binary=os.environ.get("PARLEY_FUZZ_BIN") or None,
        )
        for url in filter(None, [stack.https_url, stack.http_url]):
            require_loopback(urllib.parse.urlsplit(url).hostname)
        require_loopback(stack.mqtt_host)
        return stack

    @property
    def https_host(self):
        return urllib.parse.urlsplit(self.https_url).hostname

    @property
    def https_port(self):
        return urllib.parse.urlsplit(self.https_url).port or 443

    @property
    def http_port(self):
        return urllib.parse.urlsplit(self.http_url).port if self.http_url else None

    def ssl_context(self, alpn=None):
        context = ssl.create_default_context(cafile=self.ca) if self.ca else ssl.create_default_context()
        if alpn:
            context.set_alpn_protocols(alpn)
        return context

    def client(self, http2=False, timeout=HTTP_TIMEOUT, local_address=None):
        transport = httpx.HTTPTransport(verify=self.ssl_context(), http2=http2, local_address=local_address)
        return httpx.Client(base_url=self.https_url, transport=transport, timeout=timeout)

    def pids(self):
        """The pids of serve, worker (their pid files) and mosquitto (by its config file)."""
        found = {}
        if not self.data_dir:
            return found
        for name in ("serve", "worker"):
            try:
                with open(os.path.join(self.data_dir, "run", f"{name}.pid")) as f:
                    found[name] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        config = os.path.join(self.data_dir, "mosquitto", "mosquitto.conf")
        out = subprocess.run(["pgrep", "-f", f"mosquitto -c {config}"], capture_output=True, text=True).stdout.split()
        if out:
            found["mosquitto"] = int(out[0])
        return found

    def parley_binary(self):
        if self.binary:
            return self.binary
        serve = self.pids().get("serve")
        # The running serve's executable, even if a rebuild replaced the file since.
        return f"/proc/{serve}/exe" if serve else None

    def config_file(self):
        path = os.path.join(self.data_dir or "", "parley.env")
        return path if self.data_dir and os.path.exists(path) else None


# --- accounts and rooms ----------------------------------------------------------------------

@dataclasses.dataclass
class Account:
    id: int
    email: str
    password: str
    token: str
    refresh_token: str
    device_id: int
    mqtt: dict
    admin: bool = False

    @property
    def auth(self):
        return {"Authorization": f"Bearer {self.token}"}


def check(response, *statuses):
    if response.status_code not in statuses:
        raise RuntimeError(f"{response.request.method} {response.request.url.path}: "
                           f"{response.status_code} {response.text[:300]}")
    return response


def patiently(send):
    """Sends again after a 429 (Retry-After), for at most RATE_LIMIT_PATIENCE seconds."""
    deadline = time.monotonic() + RATE_LIMIT_PATIENCE
    while True:
        response = send()
        if response.status_code != 429 or time.monotonic() > deadline:
            return response
        wait = min(float(response.headers.get("retry-after", "5")), max(0.0, deadline - time.monotonic())) + 0.2
        print(f"  (rate-limited; waiting {wait:.0f} s)", file=sys.stderr)
        time.sleep(wait)


class Accounts:
    """Makes fresh accounts with unique e-mail addresses on the stack."""

    def __init__(self, stack, label="fuzz"):
        self.stack = stack
        self.http = stack.client(local_address=HARNESS_ADDRESS)
        self.prefix = f"{label}-{int(time.time())}-{os.getpid()}"
        self.count = 0
        self._admin = None
        self._admin_failed = False

    def _email(self, role):
        self.count += 1
        return f"{self.prefix}-{role}{self.count}@example.com"

    def login(self, email, password, device=None):
        body = {"email": email, "password": password}
        if device:
            body["device"] = device
        answer = check(patiently(lambda: self.http.post("/v1/auth/login", json=body)), 200).json()
        return Account(id=answer["user"]["id"], email=email, password=password, token=answer["accessToken"],
                       refresh_token=answer["refreshToken"], device_id=answer["deviceId"], mqtt=answer["mqtt"])

    def admin(self):
        """A system administrator, made once by the CLI; None when the CLI cannot be used."""
        if self._admin or self._admin_failed:
            return self._admin
        binary, config = self.stack.parley_binary(), self.stack.config_file()
        if not binary or not config:
            self._admin_failed = True
            return None
        email, password = self._email("admin"), secrets.token_urlsafe(PASSWORD_BYTES)
        done = subprocess.run(
            [binary, "user", "create", "--config", config, "--admin", "--email", email,
             "--first-name", "Fuzz", "--last-name", "Admin"],
            input=password + "\n", capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            print(f"  (no administrator: parley user create failed: {done.stderr.strip()[:200]})", file=sys.stderr)
            self._admin_failed = True
            return None
        self._admin = self.login(email, password)
        self._admin.admin = True
        return self._admin

    def user(self, first="Fuzz", last="User"):
        admin = self.admin()
        email, password = self._email("user"), secrets.token_urlsafe(PASSWORD_BYTES)
        body = {"email": email, "password": password, "firstName": first, "lastName": last}
        if admin:
            check(self.http.post("/v1/admin/users", json=body, headers=admin.auth), 201)
        else:
            check(patiently(lambda: self.http.post("/v1/auth/register", json=body)), 201)
        return self.login(email, password)

    def two_party_room(self, a, b):
        return check(self.http.put(f"/v1/rooms/direct/{b.id}", headers=a.auth), 200, 201).json()

    def multiparty_room(self, owner, others, name="fuzz room", role="writer"):
        body = {"name": name, "members": [{"userId": o.id, "role": role} for o in others]}
        return check(self.http.post("/v1/rooms", json=body, headers=owner.auth), 201).json()

    def history(self, account, room_id, limit=200):
        """Every message of a room, oldest first (bounded: at most 20 pages)."""
        messages, params = [], {"limit": limit}
        for _ in range(20):
            page = check(self.http.get(f"/v1/rooms/{room_id}/messages", params=params, headers=account.auth), 200).json()
            messages = page["messages"] + messages
            if not page["hasMore"] or not page["messages"]:
                break
            params = {"limit": limit, "before": page["messages"][0]["seq"]}
        return messages


# --- MQTT ------------------------------------------------------------------------------------

class MqttPeer:
    """A paho MQTT v5 client logged in with an account's MQTT credentials. Collects every
    message, every PUBACK reason code and every disconnect, for the fuzzers to wait on."""

    def __init__(self, stack, account, name=None):
        self.stack = stack
        self.account = account
        self.name = name or f"user {account.id}"
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=account.mqtt["clientId"],
                                  protocol=paho.MQTTv5)
        self.client.username_pw_set(account.mqtt["username"], account.mqtt["password"])
        self.changed = threading.Condition()
        self.messages = []            # (topic, payload bytes, properties, monotonic time received)
        self.acks = {}                # mid -> PUBACK reason code (int)
        self.subacks = {}             # mid -> [reason codes]
        self.connected = None         # None until CONNACK, then True or the refusal
        self.disconnects = []         # reason codes of its disconnects (close() adds one too)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.client.on_subscribe = self._on_subscribe
        self.client.on_disconnect = self._on_disconnect

    def _notify(self, change):
        with self.changed:
            change()
            self.changed.notify_all()

    def _on_connect(self, client, userdata, flags, reason, properties):
        self._notify(lambda: setattr(self, "connected", True if not reason.is_failure else str(reason)))

    def _on_message(self, client, userdata, message):
        self._notify(lambda: self.messages.append((message.topic, bytes(message.payload), message.properties,
                                                   time.monotonic())))

    def _on_publish(self, client, userdata, mid, reason, properties):
        self._notify(lambda: self.acks.__setitem__(mid, reason.value))

    def _on_subscribe(self, client, userdata, mid, reasons, properties):
        self._notify(lambda: self.subacks.__setitem__(mid, [r.value for r in reasons]))

    def _on_disconnect(self, client, userdata, flags, reason, properties):
        self._notify(lambda: self.disconnects.append(reason.value if hasattr(reason, "value") else int(reason)))

    def connect(self, timeout=10):
        self.client.connect(self.stack.mqtt_host, self.stack.mqtt_port, keepalive=30, clean_start=True)
        self.client.loop_start()
        if not self.wait(lambda: self.connected is not None, timeout) or self.connected is not True:
            self.close()
            raise RuntimeError(f"MQTT connect of {self.name} failed: {self.connected}")
        return self

    def wait(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True

    def subscribe(self, topic, qos=1, timeout=10):
        """Subscribes and returns the SUBACK reason codes (None when none came in time)."""
        result, mid = self.client.subscribe(topic, qos=qos)
        if result != paho.MQTT_ERR_SUCCESS:
            return None
        self.wait(lambda: mid in self.subacks, timeout)
        return self.subacks.get(mid)

    def publish(self, topic, payload, qos=1, retain=False, user_properties=None):
        """Publishes; returns the message id to wait on with puback()."""
        properties = None
        if user_properties:
            properties = Properties(PacketTypes.PUBLISH)
            properties.UserProperty = list(user_properties)
        return self.client.publish(topic, payload, qos=qos, retain=retain, properties=properties).mid

    def puback(self, mid, timeout=5):
        self.wait(lambda: mid in self.acks or self.disconnects, timeout)
        return self.acks.get(mid)

    def messages_on(self, topic):
        with self.changed:
            return [payload for t, payload, _, _ in self.messages if t == topic]

    def close(self):
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()


def events(payloads):
    """The JSON objects among raw payloads (others skipped)."""
    out = []
    for payload in payloads:
        try:
            out.append(json.loads(payload))
        except (ValueError, RecursionError):
            pass
    return out
