"""Rebalance time of a 30-member group on the real broker: kassign vs kafka-python's built-in sticky.

    .venv/bin/python tests/support/broker/rebalance_bench.py [--members 30] [--trials 3] [--json out/rebalance.json]
    make bench-rebalance

29 kafka-python consumer processes (tests/support/consumer_worker.py) form a stable group; then a 30th joins.
Rebalance time = from the newcomer asking its assignor for JoinGroup metadata (right before it sends
JoinGroup) until every member's rebalance listener has reported its new assignment (cooperative:
until the last assignment callback of the follow-up round; members that keep everything get none). The newcomer then
leaves gracefully and the next trial starts. Also reported: the leader's time inside ``assign``.

Variants: kafka-python's own ``StickyPartitionAssignor`` ("kafka-python sticky") and kassign's
assignors (``kassign.kafka_python``) for each --kassign strategy this build has (default: sticky and
cooperative-sticky when available, else range and fair, so the harness still runs before the sticky
engine lands). Every process is bounded (--max-runtime); the broker is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS_DIR))

import kassign  # noqa: E402
from support import kafka_broker as kb  # noqa: E402


def first_after(worker: kb.Worker, ev: str, since: float) -> float | None:
    for e in worker.events():
        if e["ev"] == ev and e["t"] >= since:
            return e["t"]
    return None


def measure(
    broker: kb.KafkaBroker,
    work: Path,
    topics: list[str],
    parts: set,
    label: str,
    strategy: str,
    builtin: bool,
    members: int,
    trials: int,
    max_runtime: float,
) -> dict[str, Any]:
    run = kb.GroupRun(
        broker, broker.unique_name(f"bench-{label.replace(' ', '-')}"), topics, work / label, max_runtime=max_runtime
    )
    rebalance, assign_s = [], []
    try:
        started = time.monotonic()
        for i in range(members - 1):
            run.start_python(f"m{i:02d}", strategy, builtin=builtin)
        run.wait_stable(parts, timeout=240)
        warmup = time.monotonic() - started
        for trial in range(trials):
            since = time.time()
            newcomer = run.start_python(f"new{trial}", strategy, builtin=builtin)
            run.wait_stable(parts, timeout=120)
            stable = time.time()
            t0 = None
            deadline = time.monotonic() + 10
            while t0 is None and time.monotonic() < deadline:
                t0 = first_after(newcomer, "joining", since)
                time.sleep(0.05)
            if t0 is None:
                raise RuntimeError(f"{label}: the newcomer never logged 'joining'")
            # The last assignment callback of each member in this rebalance (eager: every member gets
            # one; cooperative: members that keep all they had may get none, the newcomer gets its
            # partitions in the follow-up round).
            ends = {
                w.name: max(
                    (e["t"] for e in w.events() if e["ev"] == "assigned" and t0 <= e["t"] <= stable), default=None
                )
                for w in run.live()
            }
            if ends[newcomer.name] is None:
                raise RuntimeError(f"{label}: the newcomer has no 'assigned' after its join")
            rebalance.append(max(t for t in ends.values() if t is not None) - t0)
            led = [e for w in run.live() for e in w.events() if e["ev"] == "led" and e["t"] >= t0]
            if led:
                assign_s.append(max(e["seconds"] for e in led))
            run.close(newcomer.name)
            run.wait_stable(parts, timeout=120)
    finally:
        run.stop_all()
    return {
        "variant": label,
        "members": members,
        "trials": trials,
        "group_formed_s": round(warmup, 2),
        "rebalance_s": [round(x, 3) for x in rebalance],
        "rebalance_median_s": round(statistics.median(rebalance), 3),
        "assign_ms": [round(x * 1000, 3) for x in assign_s],
        "assign_median_ms": round(statistics.median(assign_s) * 1000, 3) if assign_s else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--members", type=int, default=30)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--topics", type=int, default=2)
    p.add_argument("--partitions", type=int, default=60, help="per topic")
    p.add_argument("--kassign", default=None, help="comma-separated kassign strategies (default: see docstring)")
    p.add_argument("--max-runtime", type=float, default=900.0, help="per consumer process, seconds")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)

    if args.kassign:
        wanted = [s for s in args.kassign.split(",") if s]
    else:
        wanted = [s for s in ("sticky", "cooperative-sticky") if s in kassign.STRATEGIES] or ["range", "fair"]
    missing = [s for s in wanted if s not in kassign.STRATEGIES]
    if missing:
        p.error(f"not in this build: {', '.join(missing)} (available: {', '.join(kassign.STRATEGIES)})")

    work = Path(tempfile.mkdtemp(prefix="kassign-rebalance-bench-"))
    broker = kb.KafkaBroker(kb.broker_libs(), work / "broker")
    broker.work_dir.mkdir(parents=True)
    broker.start()
    results = []
    try:
        topics = broker.create_topics([broker.unique_name(f"bench-{i}") for i in range(args.topics)], args.partitions)
        parts = {(t, q) for t in topics for q in range(args.partitions)}
        variants = [("kafka-python sticky", "sticky", True)] + [(f"kassign {s}", s, False) for s in wanted]
        for label, strategy, builtin in variants:
            res = measure(
                broker, work, topics, parts, label, strategy, builtin, args.members, args.trials, args.max_runtime
            )
            print(json.dumps(res), flush=True)
            results.append(res)
    finally:
        broker.stop()

    print(
        f"\n{args.members} members, {args.topics} x {args.partitions} partitions, {args.trials} joins each "
        f"(kafka-python {__import__('kafka').__version__}, kassign {kassign.__version__})"
    )
    print(f"{'variant':<28} {'rebalance median (s)':>21} {'all (s)':>24} {'leader assign median (ms)':>26}")
    for r in results:
        print(
            f"{r['variant']:<28} {r['rebalance_median_s']:>21.3f} {r['rebalance_s']!s:>24} "
            f"{r['assign_median_ms']!s:>26}"
        )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
