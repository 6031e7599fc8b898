#!/usr/bin/env python3
"""The chaos run's webhook receiver: the app's backend, on loopback.

    hooks.py --port PORT --out FILE --secret-file FILE

Records every request to FILE as one JSON line (received time, webhook-id, the event's type,
room, message id, seq and uid, and whether its signature verified with the secret in
--secret-file, read when the first request comes), and answers 204. verify.py then checks
that every stored message of the run was delivered, in order per room.
"""

import argparse
import base64
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--secret-file", required=True)
    args = parser.parse_args()
    lock = threading.Lock()
    out = open(args.out, "a", buffering=1)
    key = []

    def signing_key():
        if not key:
            with open(args.secret_file) as f:
                key.append(base64.b64decode(f.read().strip().removeprefix("whsec_")))
        return key[0]

    class Handler(BaseHTTPRequestHandler):
        # Keep-alive, as an app's backend answers (HTTP/1.0 took a connection and a thread a
        # delivery; measured, that was not what held a run's deliveries back).
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            wid = self.headers.get("webhook-id", "")
            stamp = self.headers.get("webhook-timestamp", "")
            signed = f"{wid}.{stamp}.".encode() + body
            try:
                expected = "v1," + base64.b64encode(hmac.new(signing_key(), signed, hashlib.sha256).digest()).decode()
            except OSError:
                expected = None
            verified = expected is not None and any(
                hmac.compare_digest(expected, s) for s in self.headers.get("webhook-signature", "").split())
            try:
                event = json.loads(body)
            except ValueError:
                event = {}
            data = event.get("data") or {}
            record = {"t": int(time.time() * 1000), "id": wid, "type": event.get("type"),
                      "room": data.get("chatRoomId"), "message": data.get("id"), "seq": data.get("seq"),
                      "uid": data.get("uid"), "verified": verified}
            with lock:
                out.write(json.dumps(record) + "\n")
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_):
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
