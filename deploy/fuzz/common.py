"""What every hostile-input fuzzer shares, in three modules the surfaces use through this one:
stack.py (the stack under test and how the environment describes it, fresh accounts and rooms,
MQTT v5 clients), watch.py (the server processes meanwhile: crashes, memory, error logs) and
results.py (each case's record, the JSON file and the table).
"""
from results import Result, common_arguments, finish, mib, printable
from stack import HARNESS_ADDRESS, HTTP_TIMEOUT, Accounts, MqttPeer, Stack, check, events
from watch import Watch, memory_kib

# Re-exported: what the surfaces import from here (pyflakes reads this as use).
__all__ = [
    "Result", "common_arguments", "finish", "mib", "printable",
    "HARNESS_ADDRESS", "HTTP_TIMEOUT", "Accounts", "MqttPeer", "Stack", "check", "events",
    "Watch", "memory_kib",
]
