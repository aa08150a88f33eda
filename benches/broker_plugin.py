"""kassign's broker plugin against the broker's ``UniformAssignor``, inside one JVM.

For each scenario, ``kassign.peers.Harness race`` (ServerBench.java) builds the coordinator's own
input once (``GroupSpecImpl``, ``SubscribedTopicDescriberImpl``, as ``TargetAssignmentBuilder``
builds them) and holds one instance of each assignor, reused across calls as a broker holds its
assignors: ``server-uniform`` (Apache Kafka 4.4.0's ``UniformAssignor``) and ``server-kassign``
(``kassign.broker.KassignAssignor`` from ``dist/kassign-broker-<version>.jar``: the conversions,
the JNI calls and the result maps included). Both are warmed up, then their calls alternate, so that
the load of a shared machine falls on both alike. Prints a Markdown table: wall time median and
best, the ratio (``uniform`` / kassign, above 1x: kassign faster), process CPU time medians (GC
included, on a 10 ms clock) and the calling thread's CPU time medians (exact; what a call costs
without the waiting that load adds) (BENCHMARKS.md, "The broker plugin").

    python benches/broker_plugin.py            # needs `make broker-plugin` first
    python benches/broker_plugin.py --shapes np-1000/fresh
    python benches/broker_plugin.py --shapes java-large-uniform/leave java-large-uniform/join
    python benches/broker_plugin.py --phases --shapes java-large-uniform/leave   # where the time goes

The shapes: the N = P series (1,000 to 100,000 members), the 1M-partition group (500 topics x
2000, 2000 members), 1000 members on 100 topics x 100 partitions, and two heterogeneous ones
(``java-half``: a quarter of 500 members on 50 of 100 topics, the rest on the other 50;
``java-large-imbalance``: the 1M group with its last member on topic 0 only). Besides ``fresh`` and
``round2`` (peers/scenarios.py), two rounds are derived here from a shape's round 2, where every
member but member 0 holds its round-1 partitions: ``leave`` (member 0 is gone: the others hold
everything but its share, which is free) and ``join`` (member 0 holds its share too, and one new
member without history joins). The coordinator sees membership change on most rebalances.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES.parent))  # the repo root: the peers package

from peers import scenarios, server_diff, server_kassign_diff  # noqa: E402

#: Shapes of this benchmark beyond peers/scenarios.py's grid: the 1000 x 10k shape of issue 38
#: (1000 members on 100 topics x 100 partitions, all on all).
LOCAL_SHAPES = {
    "kip848-1000x10k": scenarios.Shape(
        "kip848-1000x10k",
        "100 topics x 100 partitions (10k), 1000 members, all on all",
        scenarios._uniform(100, 100, 1000),
    ),
}
SHAPES = (
    [f"np-{n}/{rnd}" for n in (1000, 2100, 10000, 100000) for rnd in ("fresh", "round2", "leave", "join")]
    + [f"java-large-uniform/{rnd}" for rnd in ("fresh", "round2", "leave", "join")]
    + [f"kip848-1000x10k/{rnd}" for rnd in ("fresh", "round2", "leave", "join")]
    # Heterogeneous: java-half (100 topics x 200, 500 members, a quarter on the first 50 topics,
    # the rest on the other 50) and java-large-imbalance (1M, the last member on topic 0 only).
    + [f"java-half/{rnd}" for rnd in ("fresh", "round2", "leave", "join")]
    + [f"java-large-imbalance/{rnd}" for rnd in ("fresh", "round2")]
)
STRATEGIES = ("server-uniform", "server-kassign")


def derived_path(name: str) -> Path:
    """The scenario file of ``<shape>/<round>``: peers/scenarios.py's, or a ``leave``/``join`` round
    derived from its round 2 (written once next to it)."""
    shape, rnd = name.split("/")
    if shape in LOCAL_SHAPES:
        round2 = scenarios.CACHE_DIR / f"v{scenarios.GENERATOR_VERSION}-full" / f"{shape}.round2.json"
        if not round2.exists():
            round2.parent.mkdir(parents=True, exist_ok=True)
            for r, doc in scenarios.build_documents(LOCAL_SHAPES[shape]).items():
                tmp = round2.with_name(f"{shape}.{r}.tmp")
                tmp.write_text(json.dumps(doc, separators=(",", ":")))
                tmp.replace(round2.with_name(f"{shape}.{r}.json"))
        if rnd in ("fresh", "round2"):
            return round2.with_name(f"{shape}.{rnd}.json")
    elif rnd not in ("leave", "join"):
        return scenarios.scenario_path(name)
    else:
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


def race(scenario: Path, budget: float, warmup: float, phases: bool = False) -> dict[str, dict[str, list[float]]]:
    """Both assignors on one scenario in one JVM (Harness's race mode: one instance each, reused
    across calls as a broker does; calls interleaved so that load falls on both alike; JIT warmed on
    both first): per strategy, the wall and process CPU seconds of every timed call (the CPU time
    counts every JVM thread, GC included)."""
    classpath = f"{server_diff.build_java()}:{server_kassign_diff.plugin_jar()}"
    proc = subprocess.run(
        ["java", "-Xmx6g"]
        + (["-Dkassign.broker.timing=true"] if phases else [])
        + ["-cp", classpath, "kassign.peers.Harness", "race", "--strategy", ",".join(STRATEGIES)]
        + ["--repeat", "200", "--budget", str(budget), "--warmup", str(warmup), str(scenario)],
        capture_output=True,
        text=True,
        check=True,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    got = {
        e["strategy"]: {"wall": e["wall"], "cpu": e["cpu"], "thread": e["thread"]}
        for e in events
        if e.get("event") == "race"
    }
    if phases:
        # KassignAssignor's phase splits (one stderr line per call; the last ones are the timed calls).
        lines = [line for line in proc.stderr.splitlines() if line.startswith("kassign timing:")]
        lines = lines[-len(got["server-kassign"]["wall"]) :]
        split: dict[str, list[float]] = {}
        for line in lines:
            for phase, cpu in re.findall(r"(\S+)=\d+us/(\d+)cpu", line):
                split.setdefault(phase, []).append(int(cpu) / 1e6)
        got["phases"] = {phase: [statistics.median(v)] for phase, v in split.items()}
    return got


def fmt(sec: float) -> str:
    if sec == 0:
        return "< 10 ms"  # the process CPU clock's resolution
    return f"{sec * 1e3:.1f} ms" if sec >= 1e-3 else f"{sec * 1e6:.0f} µs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="*", default=SHAPES)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of timed rounds per cell (at most 200 rounds)")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of warm-up per cell (and 50 rounds at least)")
    ap.add_argument(
        "--json",
        type=Path,
        default=BENCHES / "results" / "broker_plugin.json",
        help="where run_all.py's BENCHMARKS.md section reads the figures (default: %(default)s)",
    )
    ap.add_argument(
        "--phases",
        action="store_true",
        help="also print where kassign's time goes: the median thread CPU time of each phase of assign() "
        "(KassignAssignor's -Dkassign.broker.timing splits); no JSON is written",
    )
    args = ap.parse_args(argv)
    if args.phases:
        for name in args.shapes:
            got = race(derived_path(name), args.budget, args.warmup, phases=True)
            split = ", ".join(f"{phase} {fmt(v[0])}" for phase, v in got["phases"].items())
            print(f"{name}: kassign thread CPU per phase (medians): {split}", flush=True)
        return 0
    load = os.getloadavg()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in load)} ({os.cpu_count()} CPUs)")
    print()
    print(
        "| scenario | calls | uniform wall median / best | kassign wall median / best | ratio median / best"
        " | paired ratio | uniform CPU | kassign CPU | uniform / kassign thread CPU |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for name in args.shapes:
        got = race(derived_path(name), args.budget, args.warmup)
        u, k = got["server-uniform"], got["server-kassign"]
        row = {
            "scenario": name,
            "calls": len(k["wall"]),
            "uniform_wall": statistics.median(u["wall"]),
            "uniform_best": min(u["wall"]),
            "kassign_wall": statistics.median(k["wall"]),
            "kassign_best": min(k["wall"]),
            "uniform_cpu": statistics.median(u["cpu"]),
            "kassign_cpu": statistics.median(k["cpu"]),
            "uniform_thread": statistics.median(u["thread"]),
            "kassign_thread": statistics.median(k["thread"]),
            # Each round calls both, one after the other: the median of the rounds' ratios, which
            # a burst of load on the shared machine (slowing both calls of a round) leaves alone.
            "paired": statistics.median(uw / kw for uw, kw in zip(u["wall"], k["wall"])),
        }
        rows.append(row)
        cells = [
            name,
            str(row["calls"]),
            f"{fmt(row['uniform_wall'])} / {fmt(row['uniform_best'])}",
            f"{fmt(row['kassign_wall'])} / {fmt(row['kassign_best'])}",
            f"{row['uniform_wall'] / row['kassign_wall']:.2f}x / {row['uniform_best'] / row['kassign_best']:.2f}x",
            f"{row['paired']:.2f}x",
            fmt(row["uniform_cpu"]),
            fmt(row["kassign_cpu"]),
            f"{fmt(row['uniform_thread'])} / {fmt(row['kassign_thread'])}",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)
    if args.json:
        end = os.getloadavg()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "command": "python benches/broker_plugin.py"
            + (f" --shapes {' '.join(args.shapes)}" if args.shapes != SHAPES else "")
            + (f" --budget {args.budget:g}" if args.budget != 10.0 else "")
            + (f" --warmup {args.warmup:g}" if args.warmup != 3.0 else ""),
            "load": f"{load[0]:.1f} at start, {end[0]:.1f} at the end",
            "cpus": os.cpu_count(),
            "rows": rows,
        }
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
