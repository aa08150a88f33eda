"""The drop-in classes' leader step against the clients' own classes, timed as a coordinator runs it.

Shape: 1 topic, N partitions, N members, every member subscribing (the shape of issue 30), fresh
(no history) and round 2 (every member sends its round-1 assignment, generation 1, as history).
Each member's metadata is written by its own instance of the class under test, as in a real group.
For each client (kafka-python, aiokafka), strategy and N:

* **leader step**: ``assign(cluster, members)`` on the members' metadata as the client decoded it,
  up to the SyncGroup bytes (kassign's classes return them; the client ``encode()``\\ s anything
  else), for kassign's class and the client's own class;
* **kassign.assign**: the same group through :func:`kassign.assign` (``kassign.Member``\\ s given,
  result objects built), timed alternately with kassign's leader step so that both see the same
  load: the leader step may take at most twice this;
* **inside the step**: two parts of kassign's leader step that are the client's own work: its pass
  over the returned dict (what its coordinator does with any assignor's result) and its partition
  look-up (``partitions_for_topic`` of each subscribed topic), and the rest;
* **end to end**: the client's own decode of every member's metadata bytes (kafka-python's
  ``ConsumerProtocolSubscription.decode``, aiokafka's ``ConsumerProtocol.METADATA.decode``) plus
  the leader step, with the decode's share.

Each figure is the median of repeated calls (at least 3, and at least 1 s of calls, up to 50; a
call over 2 s is run once). Prints markdown tables and writes benches/results/drop_in.json, which
docs/adapters.md and BENCHMARKS.md quote.

    .venv/bin/python benches/drop_in.py [--sizes 300,2100] [--strategies range,sticky] [--clients aiokafka]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: peers

from peers import contenders

RESULTS = Path(__file__).resolve().parent / "results" / "drop_in.json"
STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def median_time(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    if first > 2.0:
        return first
    samples = []
    spent = 0.0
    while len(samples) < 50 and (len(samples) < 3 or spent < 1.0):
        t = time.perf_counter()
        fn()
        dt = time.perf_counter() - t
        samples.append(dt)
        spent += dt
    return statistics.median(samples)


def paired_medians(fa: Callable[[], Any], fb: Callable[[], Any]) -> tuple[float, float]:
    """Medians of ``fa`` and ``fb`` called alternately (at least 5 pairs and 1 s of calls, up to
    200 pairs), so that both see the same machine load: their ratio is the figure to read."""
    fa(), fb()
    a: list[float] = []
    b: list[float] = []
    spent = 0.0
    while len(a) < 200 and (len(a) < 5 or spent < 1.0):
        t0 = time.perf_counter()
        fa()
        t1 = time.perf_counter()
        fb()
        t2 = time.perf_counter()
        a.append(t1 - t0)
        b.append(t2 - t1)
        spent += t2 - t0
    return statistics.median(a), statistics.median(b)


def group(n: int, strategy: str, round_two: bool) -> dict:
    """A scenario document: 1 topic of ``n`` partitions, ``n`` members; in round 2 every member
    owns what kassign gave it in round 1 (the same history for every contender)."""
    import kassign

    doc: dict = {"topics": {"t": n}, "members": {f"member-{i:05d}": {"topics": ["t"]} for i in range(n)}}
    if round_two:
        first = kassign.assign(strategy, {m: kassign.Member(["t"]) for m in doc["members"]}, {"t": n})
        for mid, tps in first.items():
            doc["members"][mid].update(owned=[[t, p] for t, p in tps], generation=1)
    return doc


def sent(result: dict) -> dict[str, bytes]:
    """What the leader sends: every assignment as bytes (the clients encode what is not bytes)."""
    return {mid: a if isinstance(a, bytes) else a.encode() for mid, a in result.items()}


def time_class(
    client: str, who: str, strategy: str, doc: dict, cluster: Any, baseline: Callable[[], Any] | None = None
) -> dict[str, float]:
    """The leader step, the client's decode and both together for kassign's class (``who`` =
    "kassign") or the client's own class ("client"); {} when the client has no such class. With
    ``baseline`` (kassign.assign on the same group), the step is timed alternately with it and
    the baseline's median is returned as ``kassign_assign_s``."""
    if client == "kafka-python":
        classes = (
            contenders._kafka_python_classes("kassign.kafka_python")
            if who == "kassign"
            else contenders._kafka_python_classes("kafka.coordinator.assignors.range")
            | contenders._kafka_python_classes("kafka.coordinator.assignors.roundrobin")
            | contenders._kafka_python_classes("kafka.coordinator.assignors.sticky.sticky_assignor")
            | contenders._kafka_python_classes("kafka.coordinator.assignors.cooperative_sticky")
        )
        cls = classes.get(strategy)
        if cls is None:
            return {}
        raws: Any = contenders.kafka_python_metadata(cls, doc)
        decode: Callable[[Any], Any] = contenders.kafka_python_decode
        leader = cls()
    else:
        classes = (
            contenders._aiokafka_classes("kassign.aiokafka")
            if who == "kassign"
            else contenders._aiokafka_classes("aiokafka.coordinator.assignors.range")
            | contenders._aiokafka_classes("aiokafka.coordinator.assignors.roundrobin")
            | contenders._aiokafka_classes("aiokafka.coordinator.assignors.sticky.sticky_assignor")
        )
        cls = classes.get(strategy)
        if cls is None:
            return {}
        raws = contenders.aiokafka_metadata(cls, doc)
        decode = contenders.aiokafka_decode
        leader = cls() if contenders._instantiable(cls) else cls
    decoded = decode(raws)
    parts: dict[str, float] = {}
    if who == "kassign":
        # Two parts of the step that are the client's, not the assignor's: its pass over the
        # returned dict (bytes already) and its partition look-up for the subscribed topics.
        from kassign._adapter_common import partitions_per_topic

        out = leader.assign(cluster, decoded)
        parts["kassign_result_pass_s"] = median_time(lambda: sent(out))
        parts["kassign_lookup_s"] = median_time(lambda: partitions_per_topic(cluster, doc["topics"]))

    def step() -> Any:
        return sent(leader.assign(cluster, decoded))

    if baseline is not None:
        parts[f"{who}_step_s"], parts["kassign_assign_s"] = paired_medians(step, baseline)
    else:
        parts[f"{who}_step_s"] = median_time(step)
    return parts | {
        f"{who}_decode_s": median_time(lambda: decode(raws)),
        f"{who}_end_to_end_s": median_time(lambda: sent(leader.assign(cluster, decode(raws)))),
    }


def measure(client: str, strategy: str, n: int, round_two: bool) -> dict:
    import kassign

    doc = group(n, strategy, round_two)
    cluster = contenders._Cluster(doc["topics"])
    row: dict[str, Any] = {"client": client, "strategy": strategy, "members": n, "round": 2 if round_two else 1}
    members = {
        mid: kassign.Member(m["topics"], [tuple(tp) for tp in m.get("owned", [])], m.get("generation", -1))
        for mid, m in doc["members"].items()
    }
    row.update(
        time_class(client, "kassign", strategy, doc, cluster, lambda: kassign.assign(strategy, members, doc["topics"]))
    )
    row.update(time_class(client, "client", strategy, doc, cluster))
    return row


def fmt(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:.0f}x" if a / b >= 10 else f"{a / b:.1f}x"


def faster(theirs: float | None, ours: float | None) -> str:
    if theirs is None or ours is None:
        return "-"
    return f"{ratio(theirs, ours)} faster" if theirs >= ours else f"{ratio(ours, theirs)} slower"


def row_head(r: dict) -> str:
    """The first cells of a table row: client, strategy, members, round."""
    return f"| {r['client']} | {r['strategy']} | {r['members']} | {'fresh' if r['round'] == 1 else 'round 2'} | "


def tables(rows: list[dict]) -> str:
    out = [
        "Leader step (`assign(cluster, members)` up to the SyncGroup bytes), kassign's class against the "
        "client's own, and against `kassign.assign` on the same group:",
        "",
        "| client | strategy | members | round | kassign's class | client's class | kassign is | "
        "kassign.assign | class / kassign.assign |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            row_head(r) + f"{fmt(r.get('kassign_step_s'))} | {fmt(r.get('client_step_s'))} | "
            f"{faster(r.get('client_step_s'), r.get('kassign_step_s'))} | {fmt(r['kassign_assign_s'])} | "
            f"{ratio(r.get('kassign_step_s'), r['kassign_assign_s'])} |"
        )
    out += [
        "",
        "Inside kassign's leader step: the client's pass over the returned dict and its partition "
        "look-up, and the rest (reading the client's objects, assigning, encoding) against "
        "`kassign.assign`:",
        "",
        "| client | strategy | members | round | step | client's pass over the result | partition look-up | "
        "rest | rest / kassign.assign |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        k, p, lk = r.get("kassign_step_s"), r.get("kassign_result_pass_s"), r.get("kassign_lookup_s")
        rest = None if k is None or p is None or lk is None else max(k - p - lk, 0.0)
        out.append(
            f"{row_head(r)}{fmt(k)} | {fmt(p)} | {fmt(lk)} | {fmt(rest)} | {ratio(rest, r['kassign_assign_s'])} |"
        )
    out += [
        "",
        "End to end (the client's decode of every member's metadata, then the leader step), with the "
        "decode's share of kassign's figure:",
        "",
        "| client | strategy | members | round | kassign's class | of which the client's decode | "
        "client's class | kassign is |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        k, d, c = r.get("kassign_end_to_end_s"), r.get("kassign_decode_s"), r.get("client_end_to_end_s")
        # Medians of separate runs: on a loaded machine the decode alone can exceed the whole.
        share = "-" if k is None or d is None else f"{fmt(d)} ({100 * min(d / k, 1):.0f} %)"
        out.append(f"{row_head(r)}{fmt(k)} | {share} | {fmt(c)} | {faster(c, k)} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="300,2100")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--clients", default="kafka-python,aiokafka")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    rows = []
    for client in args.clients.split(","):
        for strategy in args.strategies.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                for round_two in (False, True):
                    row = measure(client, strategy, n, round_two)
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    doc = {
        "command": "benches/drop_in.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "load": os.getloadavg(),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1))
    print(tables(rows))
    return 0


def render(path: Path = RESULTS) -> str:
    """The tables of a results file (for docs and BENCHMARKS.md)."""
    return tables(json.loads(path.read_text())["rows"])


if __name__ == "__main__":
    raise SystemExit(main())
