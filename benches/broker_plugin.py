"""kassign's broker plugin against the broker's ``UniformAssignor``, inside one JVM.

For each benchmark scenario (peers/scenarios.py: the 1M-partition shapes and the N = P series,
fresh and round 2), ``kassign.peers.Harness time`` builds the coordinator's own input once
(``GroupSpecImpl``, ``SubscribedTopicDescriberImpl``; ServerBench.java) and times
``assignor.assign(groupSpec, describer)`` for ``server-uniform`` (Apache Kafka 4.4.0's
``UniformAssignor``) and ``server-kassign`` (``kassign.broker.KassignAssignor`` from
``dist/kassign-broker-<version>.jar``: the conversions, the JNI call and the result maps included).
Prints a Markdown table of medians, wall and CPU time (BENCHMARKS.md, "The broker plugin").

    python benches/broker_plugin.py            # needs `make broker-plugin` first
    python benches/broker_plugin.py --shapes np-1000/fresh
    python benches/broker_plugin.py --shapes java-large-uniform/leave java-large-uniform/join

Besides ``fresh`` and ``round2`` (peers/scenarios.py), two rounds are derived here from a shape's
round 2, where every member but member 0 holds its round-1 partitions: ``leave`` (member 0 is gone:
the others hold everything but its share, which is free) and ``join`` (member 0 holds its share
too, and one new member without history joins). The coordinator sees membership change on most
rebalances.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES.parent))  # the repo root: the peers package

from peers import scenarios, server_diff, server_kassign_diff  # noqa: E402

SHAPES = [
    f"{shape}/{rnd}"
    for shape in ("java-large-uniform", "java-large-imbalance", "np-1000", "np-2100", "np-10000", "np-100000")
    for rnd in ("fresh", "round2")
]
STRATEGIES = ("server-uniform", "server-kassign")


def derived_path(name: str) -> Path:
    """The scenario file of ``<shape>/<round>``: peers/scenarios.py's, or a ``leave``/``join`` round
    derived from its round 2 (written once next to it)."""
    shape, rnd = name.split("/")
    if rnd not in ("leave", "join"):
        return scenarios.scenario_path(name)
    round2 = scenarios.scenario_path(f"{shape}/round2")
    path = round2.with_name(f"{shape}.{rnd}.json")
    if not path.exists():
        doc = json.loads(round2.read_text())
        fresh = json.loads(round2.with_name(f"{shape}.fresh.json").read_text())
        members = doc["members"]
        first = next(iter(members))  # member 0: no history in round 2
        if rnd == "leave":
            del members[first]
        else:
            plan = scenarios.round1_plan(
                doc["topics"], list(fresh["members"]), [m["topics"] for m in fresh["members"].values()]
            )
            members[first] = {
                "topics": members[first]["topics"],
                "owned": [[t, p] for t, p in plan[0]],
                "generation": 1,
            }
            members["consumer-bench-joining"] = {"topics": list(members[first]["topics"])}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, separators=(",", ":")))
        tmp.replace(path)
    return path


def time_one(strategy: str, scenario: Path, budget: float) -> tuple[float, float]:
    """Median wall time and median process CPU time of one call (the CPU time counts every JVM
    thread, GC included; on a loaded machine it is the steadier of the two)."""
    classpath = f"{server_diff.build_java()}:{server_kassign_diff.plugin_jar()}"
    proc = subprocess.run(
        ["java", "-Xmx6g", "-cp", classpath, "kassign.peers.Harness", "time", "--strategy", strategy]
        + ["--repeat", "7", "--budget", str(budget), "--warmup", "2", str(scenario)],
        capture_output=True,
        text=True,
        check=True,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    samples = [e for e in events if e.get("event") == "sample"]
    return statistics.median(e["seconds"] for e in samples), statistics.median(e["cpu"] for e in samples)


def fmt(sec: float) -> str:
    if sec == 0:
        return "< 10 ms"  # the process CPU clock's resolution
    return f"{sec * 1e3:.1f} ms" if sec >= 1e-3 else f"{sec * 1e6:.0f} µs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="*", default=SHAPES)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of samples per cell")
    ap.add_argument(
        "--json",
        type=Path,
        default=BENCHES / "results" / "broker_plugin.json",
        help="where run_all.py's BENCHMARKS.md section reads the figures (default: %(default)s)",
    )
    args = ap.parse_args(argv)
    load = os.getloadavg()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in load)} ({os.cpu_count()} CPUs)")
    print()
    print("| scenario | uniform wall | kassign wall | uniform CPU | kassign CPU | CPU uniform / kassign |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for name in args.shapes:
        path = derived_path(name)
        uw, uc = time_one("server-uniform", path, args.budget)
        kw, kc = time_one("server-kassign", path, args.budget)
        rows.append({"scenario": name, "uniform_wall": uw, "kassign_wall": kw, "uniform_cpu": uc, "kassign_cpu": kc})
        row = [name, fmt(uw), fmt(kw), fmt(uc), fmt(kc), f"{uc / kc:.2f}x" if uc and kc else "below the clock"]
        print("| " + " | ".join(row) + " |", flush=True)
    if args.json:
        end = os.getloadavg()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "command": "python benches/broker_plugin.py"
            + (f" --shapes {' '.join(args.shapes)}" if args.shapes != SHAPES else "")
            + (f" --budget {args.budget:g}" if args.budget != 10.0 else ""),
            "load": f"{load[0]:.1f} at start, {end[0]:.1f} at the end",
            "cpus": os.cpu_count(),
            "rows": rows,
        }
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
