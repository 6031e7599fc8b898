#!/usr/bin/env python3
"""The benchmark's message hook: the app's backend allowing every message, on loopback.

    hook.py --port PORT

Answers each `POST` of Parley's message hook (`{"messages": [...]}`) with one
`{"action": "allow"}` per message, over kept-alive HTTP/1.1 connections. Its own CPU is the
app's, not Parley's: the scenario `chat-2-hook` measures what the hook costs Parley's side.
"""

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The answer leaves at once: with Nagle's algorithm on, a body written after its headers
    # waited for the client's delayed ACK (40 ms a call).
    disable_nagle_algorithm = True

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            count = len(json.loads(body).get("messages", []))
        except ValueError:
            count = 0
        answer = json.dumps({"results": [{"action": "allow"}] * count}).encode()
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(answer)}\r\n\r\n"
        self.wfile.write(head.encode() + answer)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
