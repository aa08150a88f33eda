"""Lag quality of every strategy on Zipf-distributed lags.

For each shape (1000 partitions, 50 members, all members subscribed to every topic) the partitions
get seeded Zipf lags: ranks 1..1000 are shuffled over the partitions and the partition of rank r
lags ``round(SCALE / r**s)``. Every strategy in :data:`kassign.STRATEGIES` that reads no user data
(failover would give a whole topic to one member) assigns them fresh, and the table reports

    max member lag / mean member lag          (1.0 is perfect; mean = total lag / members)

next to two references computed here, without kassign:

* ``lower bound``: no assignment can do better than ``max(total / N, l1, lN + lN+1)`` (the mean,
  the largest single lag, and two of the N+1 largest lags on one member by pigeonhole), where
  l1 >= l2 >= ... are the partition lags. This is the bound LPT's analysis is stated against.
* ``per-topic count rule bound``: :func:`count_rule_bound`, the least the member holding the largest
  lag can carry when per-topic counts stay within 1 (lag-aware's default and per-topic modes).
* ``LPT``: Graham's longest-processing-time greedy with no partition-count constraint (each
  partition, lag descending, to the member with the least lag so far). It is within 4/3 of the
  optimum, so it shows what lag balance costs when counts are ignored.

Shapes: one topic of 1000 partitions; 10 topics of 100; 200 topics of 5 (many small topics, where
per-topic state matters). Zipf exponents s = 0.8 and 1.2.

Run::

    python peers/lag_quality.py            # prints the markdown table (docs/lag_quality.md)
    python peers/lag_quality.py --json     # the raw numbers
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import sys
from collections.abc import Mapping, Sequence

import kassign
from kassign import Member

MEMBERS = 50
PARTITIONS = 1000
SCALE = 1_000_000
SEED = 5
SHAPES: dict[str, dict[str, int]] = {
    "1x1000": {"t": 1000},
    "10x100": {f"t{i:02d}": 100 for i in range(10)},
    "200x5": {f"t{i:03d}": 5 for i in range(200)},
}
EXPONENTS = (0.8, 1.2)

# (row label, strategy, options)
CONTENDERS: list[tuple[str, str, dict]] = [
    ("range", "range", {}),
    ("roundrobin", "roundrobin", {}),
    ("sticky (fresh)", "sticky", {}),
    ("cooperative-sticky (fresh)", "cooperative-sticky", {}),
    ("fair", "fair", {}),
    ("lag-aware (default: proposal)", "lag-aware", {}),
    ("lag-aware per-topic (prototype)", "lag-aware", {"mode": "per-topic"}),
    ("lag-aware global", "lag-aware", {"mode": "global"}),
]

Lags = dict[tuple[str, int], int]


def zipf_lags(topics: Mapping[str, int], s: float, seed: int = SEED) -> Lags:
    """Lag of the partition of (shuffled) rank r = round(SCALE / r**s)."""
    parts = [(t, p) for t in sorted(topics) for p in range(topics[t])]
    ranks = list(range(1, len(parts) + 1))
    random.Random(f"{seed}-{s}-{len(topics)}").shuffle(ranks)
    return {tp: round(SCALE / r**s) for tp, r in zip(parts, ranks)}


def group(topics: Mapping[str, int], n: int = MEMBERS) -> dict[str, Member]:
    return {f"consumer-{i:02d}": Member(list(topics)) for i in range(n)}


def member_lags(result: Mapping[str, Sequence], lags: Lags) -> dict[str, int]:
    return {m: sum(lags[(tp[0], tp[1])] for tp in tps) for m, tps in result.items()}


def lower_bound(lags: Lags, n: int) -> float:
    """max(total / n, l1, l_n + l_{n+1}): no assignment of these lags to n members has a smaller
    maximum member lag."""
    desc = sorted(lags.values(), reverse=True)
    bound = max(sum(desc) / n, desc[0] if desc else 0)
    if len(desc) > n:
        bound = max(bound, desc[n - 1] + desc[n])
    return bound


def count_rule_bound(lags: Lags, topics: Mapping[str, int], n: int) -> int:
    """A lower bound for assignments that keep per-topic counts within 1 (every member subscribed
    to every topic): each member then holds at least floor(n_t / n) partitions of every topic t, so
    the member holding the largest lag l1 carries l1 plus at least the smallest lags it must take."""
    if not lags:
        return 0
    hot = max(lags, key=lambda k: (lags[k], k))
    total = lags[hot]
    for t, count in topics.items():
        vals = sorted(lags[(t, p)] for p in range(count) if (t, p) != hot)
        need = count // n - (1 if t == hot[0] else 0)
        total += sum(vals[: max(need, 0)])
    return total


def lpt_max(lags: Lags, n: int) -> int:
    """Max member lag of Graham's LPT (no count constraint)."""
    heap = [0] * n
    for lag in sorted(lags.values(), reverse=True):
        heapq.heapreplace(heap, heap[0] + lag)
    return max(heap)


def measure(
    shapes: Mapping[str, Mapping[str, int]] = SHAPES, exponents: Sequence[float] = EXPONENTS, seed: int = SEED
) -> dict:
    """{(shape, s): {"rows": {label: {"max": .., "min": .., "ratio": ..}}, "mean": .., "bound": ..,
    "lpt": .., "result": {label: assignment}}}"""
    out = {}
    for shape, topics in shapes.items():
        members = group(topics)
        for s in exponents:
            lags = zipf_lags(topics, s, seed)
            mean = sum(lags.values()) / len(members)
            cell = {
                "mean": mean,
                "bound": lower_bound(lags, len(members)),
                "lpt": lpt_max(lags, len(members)),
                "count_bound": count_rule_bound(lags, topics, len(members)),
                "rows": {},
                "result": {},
                "lags": lags,
                "members": members,
                "topics": dict(topics),
            }
            for label, strategy, options in CONTENDERS:
                if strategy not in kassign.STRATEGIES:
                    continue
                result = kassign.assign(strategy, members, topics, lags=lags, **options)
                per = member_lags(result, lags)
                cell["rows"][label] = {
                    "max": max(per.values()),
                    "min": min(per.values()),
                    "ratio": max(per.values()) / mean,
                }
                cell["result"][label] = result
            out[(shape, s)] = cell
    return out


def table(data: dict) -> str:
    cols = list(data)
    head = "| strategy | " + " | ".join(f"{shape}, s={s}" for shape, s in cols) + " |"
    sep = "|---|" + "---:|" * len(cols)
    labels = [label for label, strategy, _ in CONTENDERS if strategy in kassign.STRATEGIES]
    lines = [head, sep]
    for label in labels:
        lines.append(f"| {label} | " + " | ".join(f"{data[c]['rows'][label]['ratio']:.2f}" for c in cols) + " |")
    lines.append(
        "| LPT, no count constraint | " + " | ".join(f"{data[c]['lpt'] / data[c]['mean']:.2f}" for c in cols) + " |"
    )
    lines.append(
        "| per-topic count rule bound | "
        + " | ".join(f"{data[c]['count_bound'] / data[c]['mean']:.2f}" for c in cols)
        + " |"
    )
    lines.append("| lower bound | " + " | ".join(f"{data[c]['bound'] / data[c]['mean']:.2f}" for c in cols) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    data = measure(seed=args.seed)
    if args.json:
        print(
            json.dumps(
                {
                    f"{shape} s={s}": {
                        k: v for k, v in cell.items() if k in ("mean", "bound", "lpt", "count_bound", "rows")
                    }
                    for (shape, s), cell in data.items()
                },
                indent=1,
            )
        )
    else:
        print(
            f"max member lag / mean member lag; {PARTITIONS} partitions, {MEMBERS} members, "
            f"Zipf lags SCALE/r^s, seed {args.seed}, kassign {kassign.__version__}\n"
        )
        print(table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
