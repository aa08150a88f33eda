"""Wall time and peak memory of a command's whole process tree (the fleet job's scale run).

``python -m kassign.fleet.measure [--interval S] [--json FILE] -- COMMAND ...`` runs COMMAND and
samples ``/proc`` every ``--interval`` seconds (default 0.5): the resident set size (VmRSS) of
every process in the tree, summed, and split into the Spark JVM (``java``), the Python workers
(``pyspark.daemon`` / ``pyspark.worker``) and the rest (the driver's Python). It prints, at the
end, wall time, the peak of the summed RSS, and the peak of each part, and the peak process count.
Linux only (``/proc``). The summed RSS counts shared pages once per process, so it is an upper
bound of the tree's real memory use.

Used for docs/fleet.md's scale numbers::

    python -m kassign.fleet.measure -- kassign fleet --snapshot fleet10k --out out/fleet10k
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _tree(root: int) -> list[int]:
    kids = _children()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _kind(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    if "pyspark.daemon" in cmd or "pyspark.worker" in cmd:
        return "python_workers"
    first = cmd.split(" ", 1)[0]
    if os.path.basename(first) == "java":
        return "jvm"
    return "other"


def measure(cmd: list[str], interval: float = 0.5) -> dict[str, Any]:
    """Run ``cmd``; return its exit code, wall time and peak RSS of its process tree (a JSON record)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    peak = {"total": 0, "jvm": 0, "python_workers": 0, "other": 0}
    peak_procs = 0
    samples = 0
    while proc.poll() is None:
        parts = {"jvm": 0, "python_workers": 0, "other": 0}
        pids = _tree(proc.pid)
        for pid in pids:
            # read every time: spark-submit's launcher script exec()s the JVM under the same pid
            parts[_kind(pid)] += _rss_kib(pid)
        total = sum(parts.values())
        peak["total"] = max(peak["total"], total)
        for k, v in parts.items():
            peak[k] = max(peak[k], v)
        peak_procs = max(peak_procs, len(pids))
        samples += 1
        time.sleep(interval)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of the processes of the tree that were waited for (reaped): the command itself and what it
    # reaped; a Spark JVM that its launcher does not wait for is NOT included
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    load = os.getloadavg()
    return {
        "cpu_s": round(cpu, 1),
        "load_average_at_end": [round(x, 2) for x in load],
        "command": cmd,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 1),
        "peak_rss_mib": {k: round(v / 1024) for k, v in peak.items()},
        "peak_processes": peak_procs,
        "samples": samples,
        "interval_s": interval,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kassign.fleet.measure", description=__doc__.split("\n\n")[0])
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--json", help="also write the result as JSON to this file")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        p.error("no command")
    r = measure(cmd, a.interval)
    peak = r["peak_rss_mib"]
    print(
        f"[measure] wall {r['wall_s']}s, CPU of reaped processes {r['cpu_s']}s "
        f"(load average at the end {r['load_average_at_end']}), "
        f"exit {r['exit_code']}; peak RSS of the process tree "
        f"{peak['total']} MiB (JVM {peak['jvm']}, Python workers {peak['python_workers']}, "
        f"driver Python and other {peak['other']}); up to {r['peak_processes']} processes",
        file=sys.stderr,
    )
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(r, f, indent=1)
    return int(r["exit_code"])


if __name__ == "__main__":
    sys.exit(main())
