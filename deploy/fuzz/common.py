"""What every hostile-input fuzzer shares: the stack under test, fresh accounts and rooms,
MQTT v5 clients, a watch on the server processes (crashes, memory, error logs) and the
results table.

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

The parts live in stack.py (the stack, accounts and rooms, MQTT), watch.py (the processes
meanwhile) and results.py (records and the table); the surfaces use them through this module.
"""
from results import (  # noqa: F401 (re-exported)
    Result, common_arguments, finish, memory_summary, mib, print_details, print_table, printable, read_json,
    shorten, write_json)
from stack import (  # noqa: F401 (re-exported)
    HARNESS_ADDRESS, HTTP_TIMEOUT, PASSWORD_BYTES, RATE_LIMIT_PATIENCE, Account, Accounts, MqttPeer, Stack, check,
    events, patiently, require_loopback)
from watch import LOG_PROBLEM, Watch, alive, children_rss_kib, memory_kib  # noqa: F401 (re-exported)
