"""The REST surface: schemathesis over every operation of the served /openapi.yaml, then the
explicit regression cases of rest_cases.py.

  ~/.cache/parley-fuzz-venv/bin/python deploy/fuzz/rest.py [--short] [--output FILE] [--seed N]

Two schemathesis runs (phases examples, coverage and fuzzing; stateful too in full mode): every
operation as a signed-in user, then the /v1/admin/ operations as a system administrator (when
the CLI can make one). Checks: not_a_server_error, the response's conformance (status code
documented, content type, schema, headers) and problem_json (rest_hooks.py). POST
/v1/auth/logout is left out: it would end the fuzzed session at every call; rest_cases.py
checks it once. So are the internal listener's operations (/metrics, /internal/...), which the
public listener does not serve. --short: 2 examples per operation and phase (about half a minute); full: 100.
The stack comes from PARLEY_FUZZ_* (common.py).
"""
import argparse
import base64
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import common
import media
import rest_cases

HERE = os.path.dirname(os.path.abspath(__file__))
# A request error of these types is the server's (no answer); other errors are schemathesis's own.
NETWORK_ERROR = re.compile(r"Connection|Timeout|Disconnected|ProtocolError|ChunkedEncoding|SSLError")
# Time caps of the schemathesis runs, in seconds (short, full): the whole surface stays under
# about a minute, or ten.
BUDGETS = {"user": (60, 360), "admin": (30, 180)}
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
          "response_headers_conformance,problem_json")
# A failure is reported once per operation, check and status, with one example request.
EXAMPLES_PER_KIND = 1
# The bugs being fixed, as schemathesis meets them (its NUL variants, rest_hooks.py): a request
# matching one is reported as a known bug. rest_cases.py has the exact regression cases.
KNOWN_BUGS = [
    re.compile(r"^GET \S+/v1/users\?\S*%00"),
    re.compile(r"^PUT \S+/v1/devices/\d+/push .*\\u0000"),
    re.compile(r"^PUT \S+/v1/me/quiet-hours .*\"timeZone\": \"[^\"]*\\u0000"),
    re.compile(r"^POST \S+/v1/auth/login .*\"device\".*\\u0000"),
]


def fixtures(accounts):
    """Real resources for the fuzzed routes to meet: rooms, a message, a file, a group, a role,
    a report, and a victim account for the administrator's account routes."""
    http = accounts.http
    admin = accounts.admin()
    user, peer, peer2, victim = (accounts.user(first=f"Rest{n}") for n in range(4))
    room = accounts.multiparty_room(user, [peer, peer2], name="rest fuzz room")
    accounts.two_party_room(user, peer)
    message = common.check(http.post(f"/v1/rooms/{room['id']}/messages", headers=user.auth,
                                     json={"content": "fuzz me", "uid": "rest-fixture-1"}), 201).json()
    theirs = common.check(http.post(f"/v1/rooms/{room['id']}/messages", headers=peer.auth,
                                    json={"content": "report me", "uid": "rest-fixture-2"}), 201).json()
    common.check(http.post(f"/v1/rooms/{room['id']}/messages/{theirs['id']}/reports", headers=user.auth,
                           json={"reason": "spam"}), 202)
    upload = common.check(http.post("/v1/files", params={"name": "fixture.png", "protected": "false"},
                                    content=media.png(32, 32), headers={**user.auth, "content-type": "image/png"}),
                          201).json()
    group = role = report = None
    if admin:
        group = common.check(http.post("/v1/admin/groups", headers=admin.auth,
                                       json={"name": f"{accounts.prefix} group"}), 201).json()["id"]
        role = common.check(http.post("/v1/admin/apps/fuzz-app/roles", headers=admin.auth,
                                      json={"code": f"r{int(time.time())}", "name": "fuzz role"}), 201).json()["id"]
        reports = common.check(http.get("/v1/admin/reports", headers=admin.auth, params={"limit": 200}), 200).json()
        report = next((r["id"] for r in reports["reports"] if (r["message"] or {}).get("id") == theirs["id"]), None)
    r, m, f = room["id"], message["id"], upload["id"]
    ids = {
        "/v1/devices/{id}/push": {"id": user.device_id},
        "/v1/devices/{id}": {"id": user.device_id},
        "/v1/users/{id}": {"id": peer.id},
        "/v1/rooms/direct/{userId}": {"userId": peer.id},
        "/v1/me/blocks/{userId}": {"userId": peer2.id},
        "/v1/files/{id}": {"id": f},
        "/v1/files/{id}/content": {"id": f},
        "/v1/files/{id}/thumbnails/{size}": {"id": f},
        "/v1/public/files/{id}/{name}": {"id": f, "name": upload["name"]},
        "/v1/admin/users/{id}": {"id": victim.id},
        "/v1/admin/users/{id}/deactivate": {"id": victim.id},
        "/v1/admin/users/{id}/reactivate": {"id": victim.id},
        "/v1/admin/apps/{code}/roles": {"code": "fuzz-app"},
        "/v1/rooms/{id}/members/{userId}": {"id": r, "userId": peer2.id},
        "/v1/rooms/{id}/messages/{messageId}": {"id": r, "messageId": m},
        "/v1/rooms/{id}/messages/{messageId}/reactions/{key}": {"id": r, "messageId": m, "key": ":fuzz:"},
        "/v1/rooms/{id}/messages/{messageId}/replies": {"id": r, "messageId": m},
        "/v1/rooms/{id}/messages/{messageId}/reports": {"id": r, "messageId": theirs["id"]},
    }
    for path in ("", "/hidden", "/archive", "/unarchive", "/avatar", "/retention", "/members", "/messages",
                 "/read", "/notifications", "/files"):
        ids[f"/v1/rooms/{{id}}{path}"] = {"id": r}
    if admin:
        ids["/v1/admin/groups/{id}/members/{userId}"] = {"id": group, "userId": victim.id}
        ids["/v1/admin/users/{id}/roles/{roleId}"] = {"id": victim.id, "roleId": role}
        ids["/v1/rooms/{id}/groups/{groupId}"] = {"id": r, "groupId": group}
        ids["/v1/rooms/{id}/app-roles/{roleId}"] = {"id": r, "roleId": role}
        if report:
            ids["/v1/admin/reports/{id}/resolve"] = {"id": report}
    return {"admin": admin, "user": user, "peer": peer, "peer2": peer2, "room": room, "message": message,
            "file": upload, "ids": ids}


def schemathesis_run(stack, account, ids, role, short, seed, workdir, budget):
    """One `st run`; returns the path of its NDJSON event log."""
    context = os.path.join(workdir, f"context-{role}.json")
    with open(context, "w") as f:
        json.dump({"account": {"email": account.email, "password": account.password, "token": account.token},
                   "ids": ids}, f)
    report = os.path.join(workdir, f"{role}.ndjson")
    phases = "examples,coverage,fuzzing" if short else "examples,coverage,fuzzing,stateful"
    command = [os.path.join(os.path.dirname(sys.executable), "st"), "run", f"{stack.https_url}/openapi.yaml",
               "--checks", CHECKS, "--max-examples", "2" if short else "100", "--seed", str(seed),
               "--phases", phases, "--workers", "2", "--request-timeout", "10", "--report", "ndjson",
               "--report-ndjson-path", report, "--no-color", "--suppress-health-check", "all",
               "--continue-on-failure", "--output-truncate", "true"]
    if stack.ca:
        command += ["--tls-verify", stack.ca]
    if role == "admin":
        command += ["--include-path-regex", "^/v1/admin/"]
    else:
        # The internal listener's operations (metrics, the brokers' authorisation) are not on
        # the public one, which answers them 404.
        command += ["--exclude-path", "/v1/auth/logout", "--exclude-path-regex", "^/(internal/|metrics$)"]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "rest_hooks", "PARLEY_FUZZ_REST_CONTEXT": context,
           "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log = os.path.join(workdir, f"{role}.log")
    with open(log, "w") as out:
        try:
            subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=budget, cwd=workdir)
        except subprocess.TimeoutExpired:
            print(f"  schemathesis ({role}) stopped after its {budget} s budget", file=sys.stderr)
        finally:
            os.remove(context)  # it holds the account's password and token
    return report, log


def decode_body(body, limit=400):
    if isinstance(body, dict) and "$base64" in body:
        raw = base64.b64decode(body["$base64"])
        text = raw.decode("utf-8", "backslashreplace")
    elif body is None:
        text = ""
    else:
        text = body if isinstance(body, str) else json.dumps(body)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def describe(interaction):
    request, response = interaction["request"], interaction.get("response") or {}
    headers = {k: v for k, v in (request.get("headers") or {}).items() if k.lower() in ("content-type", "range")}
    asked = f"{request['method']} {request['uri']}"
    if headers:
        asked += f" {json.dumps(headers)}"
    if request.get("body") is not None:
        asked += f" body={decode_body(request['body'])}"
    content_type = (response.get("headers") or {}).get("content-type", [""])[0]
    answered = f"{response.get('status_code')} {content_type} {decode_body(response.get('content'))}".strip()
    return asked, answered


def parse(report, role, result):
    """Counts cases and 5xx per operation and turns failed checks into findings, one per
    operation, check and status (the first example request of each)."""
    per_operation = collections.defaultdict(lambda: {"cases": 0, "5xx": 0, "nonconforming": 0})
    seen = collections.Counter()
    errors = []
    try:
        lines = open(report).read().splitlines()
    except OSError:
        result.fail(f"schemathesis ({role})", "st run", "a report", f"no report at {report}")
        return per_operation
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:  # the last line of a run stopped at its time cap
            continue
        if "NonFatalError" in event:
            errors.append(event["NonFatalError"])
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        label = finished["recorder"]["label"]
        stats = per_operation[f"{label} ({role})"]
        for case_id, interaction in finished["recorder"].get("interactions", {}).items():
            status = (interaction.get("response") or {}).get("status_code")
            stats["cases"] += 1
            result.cases += 1
            if status and status >= 500:
                stats["5xx"] += 1
                result.server_errors += 1
            failed = [c for c in finished["recorder"].get("checks", {}).get(case_id, []) if c["status"] == "failure"]
            if failed:
                stats["nonconforming"] += 1
            for check in failed:
                kind = (label, check["name"], status)
                seen[kind] += 1
                if seen[kind] > EXAMPLES_PER_KIND:
                    continue
                asked, answered = describe(interaction)
                info = check.get("failure_info") or {}
                failure = info.get("failure") or {}
                message = failure.get("title") or failure.get("message") or check["name"]
                result.fail(f"{label} ({role}): {check['name']} - {message}", asked, check["name"], answered,
                            known_bug=any(pattern.search(asked) for pattern in KNOWN_BUGS))
    for kind, count in seen.items():
        if count > EXAMPLES_PER_KIND:
            result.notes.append(f"{kind[0]} ({role}): {kind[1]} failed {count} times with status {kind[2]}")
    for error in errors[:10]:
        value = error.get("value") or {}
        text = f"{value.get('type')}: {value.get('message')}"[:400]
        if NETWORK_ERROR.search(str(value.get("type"))):
            result.fail(f"schemathesis ({role}): no answer from {error.get('label')}", error.get("label"),
                        "an answer", text)
        else:  # the tool's own failure, not the server's
            result.notes.append(f"schemathesis ({role}) failed on {error.get('label')} itself: {text}")
    return per_operation


def main():
    parser = common.common_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    parser.add_argument("--keep", help="keep schemathesis's reports and logs in this directory")
    args = parser.parse_args()
    stack = common.Stack.from_env()
    started = time.monotonic()
    watch = common.Watch(stack)
    result = common.Result("rest")
    accounts = common.Accounts(stack, label="fuzz-rest")
    fx = fixtures(accounts)
    print("regression cases...")
    rest_cases.run(stack, accounts, fx, result)
    workdir = args.keep or tempfile.mkdtemp(prefix="parley-fuzz-rest-")
    os.makedirs(workdir, exist_ok=True)
    operations = {}
    runs = [("user", fx["user"])] + ([("admin", fx["admin"])] if fx["admin"] else [])
    for role, account in runs:
        budget = BUDGETS[role][0 if args.short else 1]
        print(f"schemathesis as {role} ({'short' if args.short else 'full'})...")
        report, log = schemathesis_run(stack, account, fx["ids"], role, args.short, args.seed, workdir, budget)
        operations.update(parse(report, role, result))
        if not os.path.exists(report):
            with open(log) as f:
                print(f.read()[-3000:], file=sys.stderr)
    if not fx["admin"]:
        result.notes.append("no administrator (parley user create unavailable): admin routes fuzzed as a user only")
    result.notes.append(f"schemathesis reports in {workdir}")
    width = max((len(k) for k in operations), default=10)
    print(f"\n{'operation'.ljust(width)}  cases  5xx  nonconforming")
    for label, stats in sorted(operations.items()):
        print(f"{label.ljust(width)}  {stats['cases']:5}  {stats['5xx']:3}  {stats['nonconforming']:5}")
    return common.finish(result, watch, started, args.output)


if __name__ == "__main__":
    sys.exit(main())
