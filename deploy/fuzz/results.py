"""A surface's results: the record of every case that broke a rule, the JSON file, the table
(through common.py)."""
import dataclasses
import json
import os
import sys
import time

# --- results ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Result:
    """One surface's outcome. failures: cases that broke a rule, each with the exact request
    and the answer; expected_failures: the same for known bugs being fixed (still failures)."""
    surface: str
    cases: int = 0
    server_errors: int = 0
    crashes: list = dataclasses.field(default_factory=list)
    failures: list = dataclasses.field(default_factory=list)
    memory: dict = dataclasses.field(default_factory=dict)
    log_problems: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    # What became of each case (JSON only): [case, outcome] pairs.
    outcomes: list = dataclasses.field(default_factory=list)

    def fail(self, case, request, expected, answer, known_bug=False):
        self.failures.append({"case": case, "request": request, "expected": expected, "answer": answer,
                              "knownBug": known_bug})

    @property
    def ok(self):
        return not self.server_errors and not self.crashes and not self.failures


def mib(kib):
    return f"{kib / 1024:.0f}" if kib else "?"


def memory_summary(memory):
    """'serve 52, worker 61, mosquitto 9 MiB': each process's peak resident memory."""
    if not memory:
        return "-"
    return ", ".join(f"{name} {mib(m.get('rss_peak_kib'))}" for name, m in memory.items()) + " MiB"


def print_table(results, out=sys.stdout):
    rows = [("surface", "cases", "5xx", "crashes", "failed (known bugs)", "memory peak (RSS)", "time")]
    for r in results:
        known = sum(1 for f in r.failures if f.get("knownBug"))
        rows.append((r.surface, str(r.cases), str(r.server_errors), str(len(r.crashes)),
                     f"{len(r.failures)} ({known})", memory_summary(r.memory), f"{r.seconds:.0f} s"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(widths[i]) if i in (0, 5) else cell.rjust(widths[i])
                        for i, cell in enumerate(row)).rstrip(), file=out)
        if index == 0:
            print("  ".join("-" * w for w in widths), file=out)


def print_details(result, out=sys.stdout, answer_chars=300):
    for crash in result.crashes:
        print(f"  CRASH {crash}", file=out)
    for f in result.failures:
        tag = "known bug" if f.get("knownBug") else "FAIL"
        print(f"  {tag}: {f['case']}", file=out)
        print(f"      request:  {shorten(f['request'], answer_chars)}", file=out)
        print(f"      expected: {f['expected']}", file=out)
        print(f"      answer:   {shorten(f['answer'], answer_chars)}", file=out)
    for line in result.log_problems:
        print(f"  log: {line}", file=out)
    for note in result.notes:
        print(f"  note: {note}", file=out)


def shorten(value, limit):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
    return printable(text)


def printable(text):
    """Control characters escaped (\x00, \r), so a report prints on one line and greps as text."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def write_json(result, path):
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(dataclasses.asdict(result), f, indent=2, ensure_ascii=False, default=str)
        f.write("\n")


def read_json(path):
    with open(path) as f:
        return Result(**json.load(f))


def finish(result, watch, started, output):
    """The common end of every fuzzer: watch results in, table and details out, JSON written;
    the process's exit code (1 on any 5xx, crash or failed case)."""
    watch.finish(result)
    result.seconds = time.monotonic() - started
    print()
    print_table([result])
    print_details(result)
    write_json(result, output)
    return 0 if result.ok else 1


def common_arguments(parser):
    parser.add_argument("--short", action="store_true", help="a quick pass (bounded to about a minute)")
    parser.add_argument("--output", help="write the result as JSON to this file")
    parser.add_argument("--seed", type=int, default=20261125, help="seed of every random choice")
    return parser


if __name__ == "__main__":
    # python3 results.py RESULT.json ...: the combined table of several fuzzers' results.
    combined = [read_json(path) for path in sys.argv[1:]]
    print_table(combined)
    sys.exit(0 if all(r.ok for r in combined) else 1)
