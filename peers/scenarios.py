"""Seeded benchmark scenarios: the grid of docs/benchmark-shapes.md, fresh (round 1) and round 2.

Every shape is generated twice:

* ``<shape>/fresh``: nobody owns anything (generation -1).
* ``<shape>/round2``: one member changed. Every member but member 0 resubmits the partitions it
  got in round 1 at generation 1; member 0 rejoins with no history (a restart that lost its
  state, as in Java's own scale tests).

Round 1 is computed here, independently of the code under test: partitions in (topic, partition)
order each go to the least-loaded subscribed member, ties by member id. On uniform subscriptions
this is exactly Java's fresh sticky deal (round-robin over members sorted by id), and on
heterogeneous ones it is a balanced, valid plan.

Member ids look like the broker's (``consumer-bench-<n>-<uuid>``, seeded), so string sorting and
hashing cost what they cost on a real group. Scenarios are written as the JSON documents of
:mod:`kassign.scenario` (what every harness reads) and cached under ``benches/.cache``.

Usage::

    python peers/scenarios.py --list
    python peers/scenarios.py --write java-large-uniform/round2   # prints the cached path
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GENERATOR_VERSION = 1
SEED = 9987
CACHE_DIR = Path(__file__).resolve().parent / ".cache" / "scenarios"

#: The N = P series (1 topic, N partitions, N members).
NP_SERIES = (100, 300, 1000, 2100, 10000, 100000)
#: Tiny sizes for the CI smoke run.
NP_SERIES_SMOKE = (10, 100)


@dataclass(frozen=True)
class Shape:
    """A group shape: topics with partition counts and each member's subscription."""

    name: str
    description: str
    build: Callable[[random.Random], tuple[dict[str, int], list[list[str]]]]
    #: For the N = P series: N, else None.
    np: int | None = None

    def size(self) -> tuple[int, int]:
        """(partitions, members), without building member lists."""
        topics, subs = self.build(random.Random(SEED))
        return sum(topics.values()), len(subs)


def _topic_names(n: int) -> list[str]:
    width = max(1, len(str(n - 1)))
    return [f"topic-{j:0{width}d}" for j in range(n)]


def _uniform(n_topics: int, partitions: int, members: int):
    def build(rng: random.Random):
        names = _topic_names(n_topics)
        return {t: partitions for t in names}, [names] * members

    return build


def _last_on_topic0(n_topics: int, partitions: int, members: int):
    def build(rng: random.Random):
        names = _topic_names(n_topics)
        return {t: partitions for t in names}, [names] * (members - 1) + [[names[0]]]

    return build


def _half_half(n_topics: int, partitions: int, members: int):
    def build(rng: random.Random):
        names = _topic_names(n_topics)
        first, second = names[: n_topics // 2], names[n_topics // 2 :]
        return {t: partitions for t in names}, [first if i % 4 == 0 else second for i in range(members)]

    return build


def _buckets(n_topics: int, partitions: int, members: int, n_buckets: int):
    def build(rng: random.Random):
        names = _topic_names(n_topics)
        per = n_topics // n_buckets
        buckets = [names[b * per : (b + 1) * per] for b in range(n_buckets)]
        return {t: partitions for t in names}, [buckets[i % n_buckets] for i in range(members)]

    return build


def _random_partitions(n_topics: int, max_partitions: int, members: int):
    def build(rng: random.Random):
        names = _topic_names(n_topics)
        counts = {t: rng.randrange(max_partitions) for t in names}
        return counts, [names] * members

    return build


def _np(n: int) -> Shape:
    return Shape(
        f"np-{n}",
        f"N = P series: 1 topic x {n} partitions, {n} members" + (" (KAFKA-9987 shape)" if n == 2100 else ""),
        _uniform(1, n, n),
        np=n,
    )


def grid_shapes() -> list[Shape]:
    """The shapes of docs/benchmark-shapes.md (np-2100 is the KAFKA-9987 shape)."""
    shapes = [
        Shape(
            "java-large-uniform",
            "500 topics x 2000 partitions (1M), 2000 members, all on all topics",
            _uniform(500, 2000, 2000),
        ),
        Shape(
            "java-large-imbalance",
            "500 topics x 2000 partitions (1M), 2000 members, the last on topic 0 only",
            _last_on_topic0(500, 2000, 2000),
        ),
        Shape(
            "java-half",
            "100 topics x 200 partitions, 500 members; i%4==0 on the first half of topics, the rest on the second half",
            _half_half(100, 200, 500),
        ),
        Shape(
            "buckets",
            "1000 topics x 50 partitions, 10000 members in 5 buckets (member i on topics [200*(i%5), 200*(i%5)+200))",
            _buckets(1000, 50, 10000, 5),
        ),
        Shape(
            "franz-large",
            "100 topics x seeded random 0..499 partitions (~25k), 100 members, all on all",
            _random_partitions(100, 500, 100),
        ),
    ]
    return [_np(n) for n in NP_SERIES] + shapes


def smoke_shapes() -> list[Shape]:
    """Tiny versions of every shape, for CI."""
    return [_np(n) for n in NP_SERIES_SMOKE] + [
        Shape("java-large-uniform", "smoke: 5 topics x 20 partitions, 20 members", _uniform(5, 20, 20)),
        Shape("java-large-imbalance", "smoke: 5 topics x 20, 20 members, last on topic 0", _last_on_topic0(5, 20, 20)),
        Shape("java-half", "smoke: 8 topics x 10, 12 members, half/half", _half_half(8, 10, 12)),
        Shape("buckets", "smoke: 20 topics x 5, 50 members in 5 buckets", _buckets(20, 5, 50, 5)),
        Shape("franz-large", "smoke: 10 topics x random 0..49, 10 members", _random_partitions(10, 50, 10)),
    ]


def _member_ids(rng: random.Random, n: int) -> list[str]:
    return [f"consumer-bench-{i}-{uuid.UUID(int=rng.getrandbits(128), version=4)}" for i in range(n)]


def round1_plan(topics: dict[str, int], ids: list[str], subs: list[list[str]]) -> list[list[tuple[str, int]]]:
    """Least-loaded subscribed member per partition, partitions in (topic, partition) order, ties by id.

    Members with the same subscription share one heap, so this is O(P log C) for the few
    subscription classes of the grid.
    """
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    rank = {i: r for r, i in enumerate(order)}
    classes: dict[tuple[str, ...], list[tuple[int, int, int]]] = {}
    for i, s in enumerate(subs):
        classes.setdefault(tuple(sorted(set(s))), []).append((0, rank[i], i))
    heaps = list(classes.values())
    for h in heaps:
        heapq.heapify(h)
    by_topic: dict[str, list[list]] = {}
    for key, h in zip(classes.keys(), heaps):
        for t in key:
            by_topic.setdefault(t, []).append(h)
    plan: list[list[tuple[str, int]]] = [[] for _ in ids]
    for t in sorted(topics):
        cand = by_topic.get(t)
        if not cand:
            continue
        for p in range(topics[t]):
            best = min(cand, key=lambda h: h[0]) if len(cand) > 1 else cand[0]
            load, r, i = best[0]
            plan[i].append((t, p))
            heapq.heapreplace(best, (load + 1, r, i))
    return plan


def build_documents(shape: Shape) -> dict[str, dict]:
    """{"fresh": doc, "round2": doc} JSON documents for a shape."""
    rng = random.Random(f"{SEED}:{shape.name}")
    topics, subs = shape.build(rng)
    ids = _member_ids(rng, len(subs))
    fresh = {"topics": topics, "members": {mid: {"topics": list(s)} for mid, s in zip(ids, subs)}}
    plan = round1_plan(topics, ids, subs)
    members2 = {}
    for i, (mid, s) in enumerate(zip(ids, subs)):
        if i == 0:
            members2[mid] = {"topics": list(s)}
        else:
            members2[mid] = {"topics": list(s), "owned": [[t, p] for t, p in plan[i]], "generation": 1}
    return {"fresh": fresh, "round2": {"topics": topics, "members": members2}}


def scenario_names(smoke: bool = False) -> list[str]:
    shapes = smoke_shapes() if smoke else grid_shapes()
    return [f"{s.name}/{r}" for s in shapes for r in ("fresh", "round2")]


def shape_by_name(name: str, smoke: bool = False) -> Shape:
    for s in smoke_shapes() if smoke else grid_shapes():
        if s.name == name:
            return s
    raise KeyError(name)


def scenario_path(name: str, smoke: bool = False) -> Path:
    """Write (once) and return the JSON file of ``<shape>/<round>``."""
    shape_name, rnd = name.split("/")
    tag = "smoke" if smoke else "full"
    path = CACHE_DIR / f"v{GENERATOR_VERSION}-{tag}" / f"{shape_name}.{rnd}.json"
    if not path.exists():
        docs = build_documents(shape_by_name(shape_name, smoke))
        path.parent.mkdir(parents=True, exist_ok=True)
        for r, doc in docs.items():
            p = path.parent / f"{shape_name}.{r}.json"
            tmp = p.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc, separators=(",", ":")))
            tmp.replace(p)
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--write", nargs="*", metavar="SHAPE/ROUND", help="write these (all when empty)")
    args = ap.parse_args(argv)
    if args.list:
        for s in smoke_shapes() if args.smoke else grid_shapes():
            p, c = s.size()
            print(f"{s.name:22s} P={p:<8d} C={c:<6d} {s.description}")
    if args.write is not None:
        for name in args.write or scenario_names(args.smoke):
            print(scenario_path(name, args.smoke))


if __name__ == "__main__":
    main()
