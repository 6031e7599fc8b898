"""Hostile uploads to POST /v1/files (raw bodies with ?name=, and multipart/form-data):

  - a decompression bomb: a 20,000 x 20,000 PNG of zeros, 390 KB compressed
  - truncated JPEGs, one claiming 30,000 x 30,000 pixels, and a broken MP4 (for ffmpeg)
  - a polyglot (PNG, then a ZIP, then HTML), an SVG with a script, HTML: served so that no
    browser runs them (nosniff, a sandboxing CSP, attachment for what is not media)
  - a declared type the content contradicts, names with paths and control characters
  - 100 MiB + 1 byte (413, and serve must not buffer it), a declared 200 MiB (413 before the
    body), multipart without its closing boundary (400), a chunked body that never ends
    (bounded: the script gives up after a few seconds and records what the server did)

  ~/.cache/parley-fuzz-venv/bin/python deploy/fuzz/uploads.py [--short] [--output FILE]

Rules: no 5xx, every error problem+json, serve's memory bounded, the worker (whose media role
runs vips and ffmpeg on the uploads) alive with the same pid, and the thumbnail jobs of the
hostile images ending (made or given up) without taking the worker down.
"""
import argparse
import select
import socket
import sys
import time

import common
import media
from rest_cases import Cases, show

LIMIT = 100 * 1024 * 1024
CHUNK = 1 << 20


class Uploads:
    def __init__(self, stack, accounts, account, result):
        self.stack, self.http, self.account, self.result = stack, accounts.http, account, result
        self.record = Cases(result).record

    def upload(self, name, data, declared, expected, filename="upload.bin", protected=True):
        """A raw upload; returns the File object when stored."""
        params = {"name": filename, "protected": str(protected).lower()}
        headers = {**self.account.auth, **({"content-type": declared} if declared else {})}
        response = self.http.post("/v1/files", params=params, content=data, headers=headers, timeout=60)
        request = f"POST /v1/files?name={filename!r} Content-Type: {declared}, {len(data)} bytes: {show(data[:48], 60)}"
        self.record(name, request, expected, response.status_code, response.headers, response.content)
        return response.json() if response.status_code == 201 else None

    def raw(self, request_head, body_chunks=(), read_timeout=10.0, stall=None):
        """Sends a request over its own TLS connection, the body piece by piece, stopping when
        the server answers early or stops reading; then reads the answer (or gives up after
        `stall` seconds of sending nothing). Returns (status, headers, body, bytes sent)."""
        context = self.stack.ssl_context(alpn=["http/1.1"])
        sent = 0
        with socket.create_connection(("127.0.0.1", self.stack.https_port), timeout=read_timeout) as plain:
            with context.wrap_socket(plain, server_hostname=self.stack.https_host) as sock:
                try:
                    sock.sendall(request_head)
                    for chunk in body_chunks:
                        sock.sendall(chunk)
                        sent += len(chunk)
                        if sock.pending() or select.select([sock], [], [], 0)[0]:
                            break  # answered (or closed) early
                except OSError:
                    pass
                sock.settimeout(stall or read_timeout)
                answer = b""
                try:
                    while b"\r\n\r\n" not in answer or not complete(answer):
                        piece = sock.recv(65536)
                        if not piece:
                            break
                        answer += piece
                except (socket.timeout, OSError) as error:
                    if not answer:
                        return None, {}, f"no answer ({type(error).__name__}) after {sent} body bytes", sent
        if not answer:
            return None, {}, f"closed without an answer after {sent} body bytes", sent
        head, _, body = answer.partition(b"\r\n\r\n")
        try:
            status = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            return None, {}, f"not an HTTP answer: {show(answer)}", sent
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
        return status, headers, body, sent


def complete(answer):
    head, _, body = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return True


def zeros(total):
    block = b"\0" * CHUNK
    while total > 0:
        yield block[:min(CHUNK, total)]
        total -= CHUNK


def wait_for_media(http, account, files, seconds):
    """Polls the files until the media worker set their dimensions or thumbnails, for at most
    `seconds` in all; returns {id: (file, done)}."""
    deadline = time.monotonic() + seconds
    state = {f["id"]: (f, False) for f in files}
    while time.monotonic() < deadline and not all(done for _, done in state.values()):
        for file_id, (_, done) in state.items():
            if not done:
                file = http.get(f"/v1/files/{file_id}", headers=account.auth).json()
                state[file_id] = (file, bool(file.get("width") or file["thumbnails"]["small"]))
        time.sleep(1)
    return state


def hostile_images(u, watch, short):
    """Images the media worker decodes: the worker must survive them (made or given up)."""
    images = [
        ("decompression bomb PNG (20000x20000 of zeros)", media.bomb_png(), "image/png", "bomb.png"),
        ("truncated JPEG", media.jpeg_truncated(), "image/jpeg", "truncated.jpg"),
        ("truncated JPEG claiming 30000x30000", media.jpeg_huge_truncated(), "image/jpeg", "huge.jpg"),
        ("MP4 of an ftyp box and garbage", media.mp4_truncated(), "video/mp4", "broken.mp4"),
    ]
    stored = []
    for name, data, declared, filename in images:
        file = u.upload(name, data, declared, [201, 400], filename=filename)
        if file:
            stored.append((name, file))
    # A job that gave up looks like one still working (no dimensions, no thumbnails): wait a
    # while, then carry on; the watch on the worker lasts until the end of the run anyway.
    state = wait_for_media(u.http, u.account, [file for _, file in stored], 15 if short else 45)
    for name, file in stored:
        final, done = state[file["id"]]
        u.result.notes.append(f"{name}: stored as {file['mimeType']}, media worker "
                              + (f"set {final['width']}x{final['height']}, thumbnails "
                                 f"{'made' if final['thumbnails']['small'] else 'none'}" if done else
                                 "set nothing within the wait (gave up, or still working)"))
    crashed = watch.crashes()
    if crashed:
        u.result.fail("hostile images", "the uploads above", "the worker alive", "; ".join(crashed))


def served_safely(u, name, file, inline_allowed):
    """The content of an upload must not run as a page in the browser that opens it."""
    response = u.http.get(f"/v1/files/{file['id']}/content", headers=u.account.auth)
    headers = response.headers
    problems = []
    if headers.get("x-content-type-options", "").lower() != "nosniff":
        problems.append("no X-Content-Type-Options: nosniff")
    if "sandbox" not in headers.get("content-security-policy", ""):
        problems.append("no Content-Security-Policy sandbox")
    disposition = headers.get("content-disposition", "")
    if not inline_allowed and not disposition.lower().startswith("attachment"):
        problems.append(f"Content-Disposition {disposition!r}, not attachment")
    u.result.cases += 1
    if problems:
        u.result.fail(f"{name} served safely", f"GET /v1/files/{file['id']}/content",
                      "nosniff, a sandbox CSP" + ("" if inline_allowed else ", attachment"),
                      f"{response.status_code} {headers.get('content-type')}: " + "; ".join(problems))


def active_content(u):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>'
    html = b"<!doctype html><script>alert(document.cookie)</script>"
    polyglot = u.upload("polyglot PNG+ZIP+HTML as image/png", media.polyglot(), "image/png", [201, 400],
                        filename="polyglot.png")
    if polyglot:
        served_safely(u, "polyglot PNG+ZIP+HTML", polyglot, inline_allowed=True)
    for name, data, declared, filename in (("SVG with a script", svg, "image/svg+xml", "x.svg"),
                                           ("HTML page", html, "text/html", "x.html"),
                                           ("HTML page without a type", html, None, "x.html")):
        file = u.upload(name, data, declared, [201, 400], filename=filename)
        if file:
            served_safely(u, name, file, inline_allowed=False)


def declared_types_and_names(u):
    # Of the declared kind (an image): stored as what the content is.
    u.upload("JPEG declared as PNG", media.JPEG_16, "image/png", [201])
    u.upload("HTML declared as JPEG", b"<html></html>", "image/jpeg", [400])
    u.upload("PNG declared as video/mp4", media.png(8, 8), "video/mp4", [400])
    u.upload("a Content-Type that is not a type", b"x", "not a type", [400, 415, 201])
    for name, filename in (("a name with a path", "../../etc/passwd"), ("a name with CR LF", "a\r\nb.txt"),
                           ("a name with NUL", "a\u0000b.txt"), ("a name of 10,000 characters", "n" * 10000),
                           ("an empty name", "")):
        file = u.upload(name, b"text", "text/plain", [201, 400], filename=filename)
        if file and any(c in file["name"] for c in "/\\\r\n\x00"):
            u.result.fail(name, f"POST /v1/files?name={filename[:40]!r}", "only the last path component, no "
                          "control characters", f"stored name {file['name']!r}")
    response = u.http.post("/v1/files", params={"name": "x", "protected": "maybe"}, content=b"x",
                           headers={**u.account.auth, "content-type": "text/plain"})
    u.record("protected=maybe", "POST /v1/files?protected=maybe", [400], response.status_code, response.headers,
             response.content)


def big_and_broken_bodies(u, watch, short):
    auth = f"Authorization: Bearer {u.account.token}\r\n".encode()
    head = (b"POST /v1/files?name=big.bin HTTP/1.1\r\nHost: localhost\r\n" + auth +
            b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n")
    serve = watch.pids.get("serve")
    before = common.memory_kib(serve) if serve else None
    status, headers, body, sent = u.raw(head % (LIMIT + 1), zeros(LIMIT + 1), read_timeout=30)
    after = common.memory_kib(serve) if serve else None
    u.record("100 MiB + 1 byte", f"POST /v1/files, Content-Length {LIMIT + 1}, {sent} bytes sent", [413], status,
             headers, body)
    if before and after and after["rss"] - before["rss"] > 64 * 1024:
        u.result.fail("100 MiB + 1 byte streamed, not buffered", "the upload above", "serve RSS growth < 64 MiB",
                      f"{common.mib(before['rss'])} -> {common.mib(after['rss'])} MiB")
    status, headers, body, sent = u.raw(head % (2 * LIMIT), (), read_timeout=10)
    u.record("a declared 200 MiB, no body sent", f"POST /v1/files, Content-Length {2 * LIMIT}, no body", [413],
             status, headers, body)

    boundary = b"fuzzboundary"
    part = (b"--" + boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n'
            b"Content-Type: image/png\r\n\r\n" + media.png(8, 8) + b"\r\n")
    multipart = (b"POST /v1/files HTTP/1.1\r\nHost: localhost\r\n" + auth +
                 b"Content-Type: multipart/form-data; boundary=" + boundary + b"\r\nContent-Length: %d\r\n\r\n")
    status, headers, body, _ = u.raw(multipart % len(part) + part, read_timeout=10)
    u.record("multipart without its closing boundary", "POST /v1/files multipart/form-data, one part, no "
             "closing --boundary--", [400], status, headers, body)
    garbage = b"--" + boundary + b"\r\nno headers at all\r\n\r\n\xff\xfe--" + boundary + b"--\r\n"
    status, headers, body, _ = u.raw(multipart % len(garbage) + garbage, read_timeout=10)
    u.record("multipart with a part without headers", "POST /v1/files multipart/form-data, a part without "
             "Content-Disposition", [400], status, headers, body)

    stall = 3 if short else 8
    chunked = (b"POST /v1/files?name=endless.bin HTTP/1.1\r\nHost: localhost\r\n" + auth +
               b"Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunks = [b"400\r\n" + b"z" * 1024 + b"\r\n"] * 3
    status, headers, body, _ = u.raw(chunked, chunks, stall=stall)
    u.result.cases += 1
    if status and status >= 500:
        u.result.server_errors += 1
        u.result.fail("a chunked body that never ends", "POST /v1/files chunked, 3 KiB then nothing",
                      "no 5xx", f"{status} {show(body)}")
    u.result.notes.append("chunked body that never ends: " + (f"answered {status} {show(body, 120)}" if status else
                                                              f"{body} (gave up after {stall} s)"))


def main():
    args = common.common_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])).parse_args()
    stack = common.Stack.from_env()
    started = time.monotonic()
    watch = common.Watch(stack)
    result = common.Result("uploads")
    accounts = common.Accounts(stack, label="fuzz-uploads")
    u = Uploads(stack, accounts, accounts.user(first="Uploader"), result)
    print("hostile images...")
    hostile_images(u, watch, args.short)
    print("active content, types and names...")
    active_content(u)
    declared_types_and_names(u)
    print("big and broken bodies...")
    big_and_broken_bodies(u, watch, args.short)
    if not answers(accounts):
        result.fail("serve answers after the uploads", "GET /health/live", "200", "no answer")
    return common.finish(result, watch, started, args.output)


def answers(accounts):
    try:
        return accounts.http.get("/health/live", timeout=5).status_code == 200
    except Exception:  # any failure to answer is the finding
        return False


if __name__ == "__main__":
    sys.exit(main())
