"""The broker's valgrind reports after a fuzz run (deploy/local/services'
PARLEY_LOCAL_MOSQUITTO_VALGRIND): the plugin is clean when no error or definite leak in a report
has a frame in the plugin (one of its source files, or its library). What the reports hold of
others (the dynamic loader's reads while it maps a library with an rpath, mosquitto's own
16-byte leak in its websockets set-up) is counted and named, not failed. Prints one line per
report; exits 1 on a finding in the plugin or an unfinished report."""

import pathlib
import re
import sys

PLUGIN = pathlib.Path(__file__).resolve().parents[2] / "Sources" / "CParleyMosquittoPlugin"
PROBLEMS = ("Invalid ", "Conditional jump", "Use of uninitialised", "Syscall param", "Mismatched free",
            "Source and destination overlap", "are definitely lost")


def records(text):
    """Each block of a report between its empty `==pid== ` lines, without the prefix."""
    block = []
    for line in text.splitlines():
        body = re.sub(r"^==\d+== ?", "", line)
        if body.strip():
            block.append(body)
        elif block:
            yield block
            block = []
    if block:
        yield block


def in_plugin(block, sources):
    return any("libParleyMosquittoPlugin" in line or any(f"({name}:" in line for name in sources)
               for line in block)


def where(block):
    """The first frame outside valgrind's own preload: what the problem is in."""
    for line in block[1:]:
        if "vgpreload" not in line and ("at 0x" in line or "by 0x" in line):
            return line.split(":", 1)[1].strip()
    return "?"


def check(path, sources):
    text = pathlib.Path(path).read_text(errors="replace")
    name = pathlib.Path(path).name
    if "ERROR SUMMARY" not in text:
        return False, f"{name}: unfinished (the broker did not stop)"
    problems = [block for block in records(text) if block[0].startswith(PROBLEMS) or PROBLEMS[-1] in block[0]]
    plugin = [block for block in problems if in_plugin(block, sources)]
    others = sorted({f"{block[0].split(' in loss record')[0]} in {where(block)}" for block in problems
                     if not in_plugin(block, sources)})
    line = f"valgrind, mosquitto with the plugin ({name}): {len(plugin)} problem(s) in the plugin"
    for block in plugin:
        line += "\n  in the plugin: " + " / ".join(block[:4])
    if others:
        line += f"; not the plugin's: {'; '.join(others)}"
    return not plugin, line


def main(paths):
    if not paths:
        print("valgrind: no report was written (the broker did not run under valgrind)")
        return 1
    sources = [p.name for p in PLUGIN.glob("*.c")]
    clean = True
    for path in paths:
        ok, line = check(path, sources)
        print(("" if ok else "FAIL: ") + line)
        clean = clean and ok
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
