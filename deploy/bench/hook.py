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

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            count = len(json.loads(body).get("messages", []))
        except ValueError:
            count = 0
        answer = json.dumps({"results": [{"action": "allow"}] * count}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

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
