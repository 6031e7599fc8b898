"""Schemathesis hooks for deploy/fuzz/rest.py, loaded by `st run` through SCHEMATHESIS_HOOKS.

rest.py writes the run's context (the stack, the account to fuzz as and the ids of real
resources) to the JSON file PARLEY_FUZZ_REST_CONTEXT. From it:

- auth: the account's access token. The fuzzed requests may end the session (DELETE on its
  device, an administrator deactivating it); after a 401 schemathesis asks again and gets a
  fresh login, or a fresh account when the old one cannot log in any more.
- path parameters: half of the generated cases get the ids of real resources the account can
  reach (its room, a message in it, its device, its file...), or every case of a deep route
  would only ever meet 404.
- NUL: about half the generated bodies and queries get a NUL character in one of their
  strings (PostgreSQL refuses NUL in text: a route that does not check first answers 500).
- the check problem_json: every error answer is application/problem+json.
"""
import json
import os
import sys
import threading

import hypothesis.strategies as st
import schemathesis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

with open(os.environ["PARLEY_FUZZ_REST_CONTEXT"]) as f:
    CONTEXT = json.load(f)

# {path template: {parameter: value}}: a real resource for each parameterised route.
KNOWN_IDS = CONTEXT["ids"]


@schemathesis.auth(refresh_interval=600)
class Session:
    """The fuzzed account's token; a new login (or account) once the session is gone."""

    def __init__(self):
        self.lock = threading.Lock()
        self.account = CONTEXT["account"]
        self.accounts = None

    def _valid(self, token):
        response = self.accounts.http.get("/v1/me", headers={"Authorization": f"Bearer {token}"})
        return response.status_code == 200

    def get(self, case, context):
        with self.lock:
            if self.accounts is None:
                self.accounts = common.Accounts(common.Stack.from_env(), label="fuzz-rest-reauth")
                return self.account["token"]
            if self._valid(self.account["token"]):
                return self.account["token"]
            try:
                fresh = self.accounts.login(self.account["email"], self.account["password"])
            except RuntimeError:
                # Deactivated, deleted or its password changed: carry on as a new account.
                fresh = self.accounts.user(first="Fuzz", last="Reauth")
            self.account = {"email": fresh.email, "password": fresh.password, "token": fresh.token}
            return fresh.token

    def set(self, case, data, context):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@schemathesis.hook
def flatmap_path_parameters(context, path_parameters):
    known = KNOWN_IDS.get(context.operation.path)
    if not known or not isinstance(path_parameters, dict):
        return st.just(path_parameters)
    return st.sampled_from([path_parameters, {**path_parameters, **known}])


def nul_variants(value):
    """The value, then one copy per string in it with a NUL inserted in that string only."""
    yield value
    if isinstance(value, str):
        yield value[:1] + "\u0000" + value[1:]
    elif isinstance(value, dict):
        for key, item in value.items():
            for variant in list(nul_variants(item))[1:]:
                yield {**value, key: variant}
    elif isinstance(value, list):
        for index, item in enumerate(value[:5]):
            for variant in list(nul_variants(item))[1:]:
                yield value[:index] + [variant] + value[index + 1:]


def with_nul_sometimes(value):
    variants = list(nul_variants(value))
    if len(variants) == 1:
        return st.just(value)
    return st.one_of(st.just(value), st.sampled_from(variants[1:]))


@schemathesis.hook
def flatmap_body(context, body):
    return with_nul_sometimes(body)


@schemathesis.hook
def flatmap_query(context, query):
    return with_nul_sometimes(query)


@schemathesis.check
def problem_json(ctx, response, case):
    """Every error answer (4xx, 5xx) to a request that can carry a body is problem+json."""
    if response.status_code < 400 or case.method.upper() == "HEAD":
        return None
    content_type = response.headers.get("content-type", [""])
    content_type = (content_type[0] if isinstance(content_type, list) else content_type) or ""
    if content_type.split(";")[0].strip().lower() != "application/problem+json":
        raise AssertionError(f"error answer {response.status_code} is {content_type or 'without a content type'}, "
                             "not application/problem+json")
    return None
