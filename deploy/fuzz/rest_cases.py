"""Explicit REST regression cases for deploy/fuzz/rest.py: each a real request and the answer
it must get. Cases marked known_bug are bugs being fixed; they fail against a build without
the fix and are reported as such (they still fail the run)."""
import json
import re
import socket
import time

import httpx

import common
import media

PROBLEM = "application/problem+json"
# HEAD must answer what GET answers, these headers included.
HEAD_HEADERS = ("content-type", "content-length", "etag", "last-modified", "accept-ranges", "content-disposition",
                "x-content-type-options")


def content_type(response_headers):
    return (response_headers.get("content-type") or "").split(";")[0].strip().lower()


def redacted(headers):
    """Headers as a report shows them: a token stays out of it."""
    return {k: ("Bearer <token>" if k.lower() == "authorization" else v) for k, v in headers.items()}


def show(body, limit=300):
    text = body.decode("utf-8", "backslashreplace") if isinstance(body, bytes) else str(body)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


class Cases:
    def __init__(self, result):
        self.result = result

    def record(self, name, request, expected, status, headers, body, known_bug=False, ok=None):
        """One case: fine when the status is expected and an error answer is problem+json."""
        self.result.cases += 1
        if status and status >= 500:
            self.result.server_errors += 1
        if ok is None:
            ok = status in expected and (status < 400 or content_type(headers) == PROBLEM)
        if not ok:
            wanted = f"{'/'.join(map(str, expected))}" + (f" {PROBLEM}" if min(expected) >= 400 else "")
            answer = f"{status} {headers.get('content-type', '(no content type)')} {show(body)}" if status else body
            self.result.fail(name, request, wanted, answer, known_bug)
        return ok

    def http(self, client, name, method, path, expected, known_bug=False, body=None, headers=None, **kwargs):
        """A request through httpx; body is sent as raw bytes exactly as given."""
        request = f"{method} {path}"
        if headers:
            request += f" {json.dumps(redacted(headers))}"
        if body is not None:
            request += " body=" + re.sub(r'("password": ?)"[^"]*"', r'\1"<password>"', show(body, 200))
        try:
            response = client.request(method, path, content=body, headers=headers, **kwargs)
        except Exception as error:  # a reset or timeout is an answer too, and a wrong one
            self.record(name, request, expected, None, {}, f"no answer: {error!r}", known_bug, ok=False)
            return None
        self.record(name, request, expected, response.status_code, response.headers, response.content, known_bug)
        return response


def raw_http(port, data, timeout=10.0, limit=1 << 20, tls=None):
    """Sends raw bytes to 127.0.0.1:port (through TLS when given a context) and reads one
    HTTP/1.1 answer: (status, headers, body) or (None, {}, why). The server may answer (and
    close) before it has read everything."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as plain:
        s = tls.wrap_socket(plain, server_hostname="localhost") if tls else plain
        try:
            s.sendall(data)
        except OSError:
            pass
        buffer, deadline = b"", time.monotonic() + timeout
        while len(buffer) < limit and time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError as error:
                if not buffer:
                    return None, {}, f"connection error without an answer: {error!r}"
                break
            if not chunk:
                break
            buffer += chunk
            head, sep, rest = buffer.partition(b"\r\n\r\n")
            if sep:
                headers = parse_headers(head)
                if len(rest) >= int(headers.get("content-length", "-1")) >= 0:
                    break
    if not buffer:
        return None, {}, "the connection closed without an answer"
    head, _, body = buffer.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, {}, f"not an HTTP answer: {show(buffer)}"
    return status, parse_headers(head), body


def parse_headers(head):
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
    return headers


def nul_cases(cases, http, fx):
    user, room = fx["user"], fx["room"]
    auth = user.auth
    json_auth = {**auth, "content-type": "application/json"}
    cases.http(http, "NUL in GET /v1/users?q=", "GET", "/v1/users?q=%00", [400], known_bug=True, headers=auth)
    cases.http(http, "NUL inside GET /v1/users?q=", "GET", "/v1/users?q=ab%00cd", [400], known_bug=True,
               headers=auth)
    cases.http(http, "NUL in pushToken of PUT /v1/devices/{id}/push", "PUT", f"/v1/devices/{user.device_id}/push",
               [400], known_bug=True, headers=json_auth,
               body=b'{"pushToken":"tok\\u0000en","pushProvider":"fcm"}')
    cases.http(http, "NUL in timeZone of PUT /v1/me/quiet-hours", "PUT", "/v1/me/quiet-hours", [400],
               known_bug=True, headers=json_auth,
               body=b'{"start":"22:00","end":"07:00","timeZone":"Europe/Prague\\u0000"}')
    credentials = {"email": user.email, "password": user.password}
    for field, device in (("device.name", {"platform": "ios", "name": "pho\u0000ne"}),
                          ("device.pushToken", {"platform": "ios", "pushToken": "tok\u0000en",
                                                "pushProvider": "apns"})):
        cases.http(http, f"NUL in {field} of POST /v1/auth/login", "POST", "/v1/auth/login", [400],
                   known_bug=True, headers={"content-type": "application/json"},
                   body=json.dumps({**credentials, "device": device}).encode())
    # The same rule where it already holds: the documented NUL refusals.
    cases.http(http, "NUL in GET /v1/search/messages?q=", "GET", "/v1/search/messages?q=ab%00cd", [400],
               headers=auth)
    cases.http(http, "NUL in a message's content", "POST", f"/v1/rooms/{room['id']}/messages", [400],
               headers=json_auth, body=b'{"content":"a\\u0000b","uid":"rest-nul-1"}')
    cases.http(http, "NUL in PATCH /v1/me firstName", "PATCH", "/v1/me", [400], headers=json_auth,
               body=b'{"firstName":"Nu\\u0000l"}')


def duplicate_key_cases(cases, http, fx):
    user, room, peer2 = fx["user"], fx["room"], fx["peer2"]
    json_auth = {**user.auth, "content-type": "application/json"}
    cases.http(http, "duplicate key role in PUT /v1/rooms/{id}/members/{userId}", "PUT",
               f"/v1/rooms/{room['id']}/members/{peer2.id}", [400], known_bug=True, headers=json_auth,
               body=b'{"role":"reader","role":"writer"}')
    cases.http(http, "duplicate key timeZone in PUT /v1/me/quiet-hours", "PUT", "/v1/me/quiet-hours", [400],
               known_bug=True, headers=json_auth,
               body=b'{"start":"22:00","end":"07:00","timeZone":"UTC","timeZone":"Europe/Prague"}')
    body = '{"email":"nobody@example.com","email":%s,"password":%s}' % (json.dumps(user.email),
                                                                       json.dumps(user.password))
    cases.http(http, "duplicate key email in POST /v1/auth/login", "POST", "/v1/auth/login", [400],
               known_bug=True, headers={"content-type": "application/json"}, body=body.encode())


def content_type_cases(cases, http, fx):
    user, room = fx["user"], fx["room"]
    quiet = b'{"start":"22:00","end":"07:00","timeZone":"Europe/Prague"}'
    cases.http(http, "JSON route with Content-Type text/plain (PUT /v1/me/quiet-hours)", "PUT",
               "/v1/me/quiet-hours", [415], known_bug=True, headers={**user.auth, "content-type": "text/plain"},
               body=quiet)
    cases.http(http, "JSON route without Content-Type (PUT /v1/me/quiet-hours)", "PUT", "/v1/me/quiet-hours",
               [415], known_bug=True, headers=user.auth, body=quiet)
    cases.http(http, "JSON route with Content-Type text/plain (POST /v1/rooms/{id}/messages)", "POST",
               f"/v1/rooms/{room['id']}/messages", [415], known_bug=True,
               headers={**user.auth, "content-type": "text/plain"}, body=b'{"content":"plain","uid":"rest-ct-1"}')


def hostile_body_cases(cases, http, fx):
    """Bodies that must be refused as they arrive: none of these is a known bug."""
    json_auth = {**fx["user"].auth, "content-type": "application/json"}
    deep = b'{"start":' + b"[" * 10000 + b"]" * 10000 + b',"end":"07:00","timeZone":"UTC"}'
    cases.http(http, "10,000-level nested JSON (PUT /v1/me/quiet-hours)", "PUT", "/v1/me/quiet-hours", [400],
               headers=json_auth, body=deep)
    cases.http(http, "invalid UTF-8 in a JSON string (PUT /v1/me/quiet-hours)", "PUT", "/v1/me/quiet-hours",
               [400], headers=json_auth, body=b'{"start":"22:00","end":"07:00","timeZone":"\xff\xfe"}')
    cases.http(http, "a body over 64 KiB on a JSON route (PUT /v1/me/quiet-hours)", "PUT", "/v1/me/quiet-hours",
               [413], headers=json_auth, body=b'{"timeZone":"' + b"a" * 70000 + b'"}')
    cases.http(http, "a number beyond Int64 (PUT /v1/me/avatar fileId 1e400)", "PUT", "/v1/me/avatar", [400],
               headers=json_auth, body=b'{"fileId":1e400}')
    cases.http(http, "an unknown route", "GET", "/v1/no-such-route", [404], headers=fx["user"].auth)
    cases.http(http, "a method the route does not have (DELETE /v1/users)", "DELETE", "/v1/users", [404, 405],
               headers=fx["user"].auth)


def logout_case(cases, accounts, fx):
    """Logout, left out of the schemathesis run (it ends the session it is called with)."""
    session = accounts.login(fx["user"].email, fx["user"].password)
    http = accounts.http
    cases.http(http, "POST /v1/auth/logout", "POST", "/v1/auth/logout", [204], headers=session.auth)
    response = cases.http(http, "a token after its logout", "GET", "/v1/me", [401], headers=session.auth)
    if response is not None and response.status_code == 401 and "www-authenticate" not in response.headers:
        cases.result.fail("a token after its logout", "GET /v1/me", "401 with WWW-Authenticate", "no WWW-Authenticate")


def wait_for_thumbnails(http, account, file_id, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        file = http.get(f"/v1/files/{file_id}", headers=account.auth).json()
        if file["thumbnails"]["small"]:
            return file
        time.sleep(0.5)
    return None


def head_cases(cases, stack, accounts, fx):
    """HEAD answers GET's status and headers without a body, over HTTP/1.1 and HTTP/2."""
    user, http = fx["user"], accounts.http
    protected = common.check(http.post("/v1/files", params={"name": "head.png"}, content=media.png(48, 48),
                                       headers={**user.auth, "content-type": "image/png"}), 201).json()
    public = fx["file"]
    made = wait_for_thumbnails(http, user, protected["id"])
    targets = [
        ("public file URL", public["url"], {}),
        ("file content with Bearer", f"/v1/files/{protected['id']}/content", user.auth),
        ("file content by its signed URL", protected["url"], {}),
        ("file content with ?access_token=", f"/v1/files/{protected['id']}/content?access_token={user.token}", {}),
    ]
    if made:
        targets += [("thumbnail by its signed URL", made["thumbnails"]["small"], {}),
                    ("thumbnail with Bearer", f"/v1/files/{protected['id']}/thumbnails/small", user.auth)]
    else:
        cases.result.notes.append("HEAD on thumbnails not checked: no thumbnail was made within 20 s")
    clients = [("HTTP/1.1", http), ("HTTP/2", stack.client(http2=True, local_address=common.HARNESS_ADDRESS))]
    if stack.http_url:
        clients.append(("cleartext HTTP/1.1", httpx.Client(base_url=stack.http_url, timeout=common.HTTP_TIMEOUT)))
    for version, client in clients:
        for name, url, headers in targets:
            get = client.get(url, headers=headers)
            head = client.head(url, headers=headers)
            same = {h: (get.headers.get(h), head.headers.get(h)) for h in HEAD_HEADERS if h != "content-length" or
                    head.headers.get(h) is not None}
            differ = {h: pair for h, pair in same.items() if pair[0] != pair[1]}
            ok = head.status_code == get.status_code == 200 and not differ and not head.content
            cases.record(f"HEAD {name} ({version})", f"HEAD {url.split('?')[0]}{'?...' if '?' in url else ''}"
                         f"{' with Bearer' if headers else ''}", [200], head.status_code, head.headers,
                         f"GET {get.status_code}; HEAD {head.status_code}, body {len(head.content)} bytes"
                         + (f", headers differ {differ}" if differ else ""), known_bug=True, ok=ok)


def malformed_http_cases(cases, stack):
    """Malformed HTTP/1.1 on the cleartext listener and over TLS: a 4xx with a problem+json
    body each."""
    listeners = [("TLS", stack.https_port, stack.ssl_context(alpn=["http/1.1"]))]
    if stack.http_port:
        listeners.insert(0, ("cleartext", stack.http_port, None))
    else:
        cases.result.notes.append("PARLEY_FUZZ_HTTP_URL unset: malformed HTTP/1.1 on the cleartext listener skipped")
    host = b"Host: 127.0.0.1\r\n"
    malformed = [
        ("oversized URL (100 KiB)", b"GET /v1/users?q=" + b"a" * 102400 + b" HTTP/1.1\r\n" + host + b"\r\n"),
        ("oversized header (100 KiB)", b"GET /health/live HTTP/1.1\r\n" + host + b"X-Big: " + b"a" * 102400 +
         b"\r\n\r\n"),
        ("both Content-Length and Transfer-Encoding", b"POST /v1/auth/login HTTP/1.1\r\n" + host +
         b"Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"0\r\n\r\n"),
        ("NUL in the path", b"GET /v1/us\x00ers HTTP/1.1\r\n" + host + b"\r\n"),
        ("a request line that is not HTTP", b"HELLO WORLD\r\n\r\n"),
        ("an invalid chunk size", b"POST /v1/auth/login HTTP/1.1\r\n" + host +
         b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
        ("a header without a colon", b"GET /health/live HTTP/1.1\r\n" + host + b"NoColonHere\r\n\r\n"),
    ]
    for listener, port, tls in listeners:
        for name, data in malformed:
            status, headers, body = raw_http(port, data, tls=tls)
            request = data[:160].decode("latin-1").encode("unicode_escape").decode() + \
                (f"... ({len(data)} bytes)" if len(data) > 160 else "") + f" (port {port})"
            case = f"malformed HTTP/1.1 ({listener}): {name}"
            if status is None:
                cases.record(case, request, [400], None, {}, body, known_bug=True, ok=False)
            else:
                ok = 400 <= status < 500 and content_type(headers) == PROBLEM and body.strip().startswith(b"{")
                cases.record(case, request, [400, 414, 431], status, headers, body, known_bug=True, ok=ok)


def run(stack, accounts, fx, result):
    cases = Cases(result)
    http = accounts.http
    nul_cases(cases, http, fx)
    duplicate_key_cases(cases, http, fx)
    content_type_cases(cases, http, fx)
    hostile_body_cases(cases, http, fx)
    logout_case(cases, accounts, fx)
    head_cases(cases, stack, accounts, fx)
    malformed_http_cases(cases, stack)
