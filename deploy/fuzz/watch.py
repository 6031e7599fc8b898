"""A watch on the server processes while a surface runs: crashes, memory, error logs (through
common.py)."""
import os
import re
import threading

# --- watching the server ---------------------------------------------------------------------

def memory_kib(pid):
    """VmRSS and VmHWM of a process in KiB, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return {"rss": int(fields["VmRSS"].split()[0]), "hwm": int(fields["VmHWM"].split()[0])}
    except (OSError, KeyError, ValueError):
        return None


def children_rss_kib(pid):
    """Resident memory of a process's children (the worker's vips and ffmpeg runs), in KiB."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children = f.read().split()
        except OSError:
            continue
        for child in children:
            total += (memory_kib(int(child)) or {}).get("rss", 0)
    return total


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


LOG_PROBLEM = re.compile(r"^\S+ (error|critical) |Fatal error|Segmentation fault|Illegal instruction|Aborted")


class Watch:
    """While a fuzzer runs: the server processes' pids (a change or a death is a crash), their
    resident memory sampled every 100 ms, and the error lines their logs gain."""

    def __init__(self, stack, interval=0.1):
        self.stack = stack
        self.interval = interval
        self.pids = stack.pids()
        self.start = {name: memory_kib(pid) for name, pid in self.pids.items()}
        self.peak = {name: (m or {}).get("rss", 0) for name, m in self.start.items()}
        self.tools_peak = 0  # the worker's media tools, together
        self.logs = self._log_sizes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _log_files(self):
        if not self.stack.data_dir:
            return []
        return [os.path.join(self.stack.data_dir, "logs", name) for name in ("serve.log", "worker.log")] + \
            [os.path.join(self.stack.data_dir, "mosquitto", "mosquitto.log")]

    def _log_sizes(self):
        sizes = {}
        for path in self._log_files():
            try:
                sizes[path] = os.path.getsize(path)
            except OSError:
                pass
        return sizes

    def _sample(self):
        while not self._stop.wait(self.interval):
            for name, pid in self.pids.items():
                m = memory_kib(pid)
                if m:
                    self.peak[name] = max(self.peak[name], m["rss"])
            if "worker" in self.pids:
                self.tools_peak = max(self.tools_peak, children_rss_kib(self.pids["worker"]))

    def now(self, name):
        pid = self.pids.get(name)
        return memory_kib(pid) if pid else None

    def crashes(self):
        """Processes that died or were replaced (a supervisor restarting one is a crash too)."""
        found = []
        current = self.stack.pids()
        for name, pid in self.pids.items():
            if not alive(pid):
                found.append(f"{name} (pid {pid}) is gone")
            elif current.get(name) != pid:
                found.append(f"{name} pid changed {pid} -> {current.get(name)}")
        return found

    def log_problems(self, limit=20):
        """Error and crash lines the logs gained since the watch began."""
        lines = []
        for path, size in self.logs.items():
            try:
                with open(path, "rb") as f:
                    f.seek(size)
                    tail = f.read(8 << 20).decode("utf-8", "replace")
            except OSError:
                continue
            for line in tail.splitlines():
                if LOG_PROBLEM.search(line):
                    lines.append(f"{os.path.basename(path)}: {line[:400]}")
        return lines[:limit]

    def finish(self, result):
        """Stops sampling and records crashes, memory and log problems into a Result."""
        self._stop.set()
        self._thread.join(1)
        result.crashes.extend(self.crashes())
        for name, pid in self.pids.items():
            end = memory_kib(pid)
            result.memory[name] = {
                "pid": pid,
                "rss_start_kib": (self.start.get(name) or {}).get("rss"),
                "rss_end_kib": (end or {}).get("rss"),
                "rss_peak_kib": self.peak.get(name),
                "hwm_end_kib": (end or {}).get("hwm"),
            }
        if self.tools_peak:
            result.memory["worker tools"] = {"rss_peak_kib": self.tools_peak}
        result.log_problems.extend(self.log_problems())
        return result
