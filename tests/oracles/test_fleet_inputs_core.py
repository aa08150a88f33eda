"""The fleet core hands the Python strategies their derived inputs (``Inputs.ids``, ``Inputs.subs``)
and the lag arrays (``Inputs.shared[TOPIC_LAGS]``) instead of each churn round (each group, for the
arrays) deriving them in Python: they must be exactly what the Python
derivation gives (:func:`kassign.assignors._greedy.subscribers_by_topic` on the round's members):
the same list, the same dict order, tuples of the same member indexes, and the same tuple sharing
between topics (strategies intern eligible sets by identity). The result rows stay those of the
Python reference evaluation."""

from __future__ import annotations

import random
from collections import Counter

import pyarrow as pa
import pytest

from kassign.assignors._greedy import TOPIC_LAGS, Inputs, subscribers_by_topic
from kassign.fleet.evaluate import evaluate_group_table, python_strategies
from oracles.fleet_group import evaluate_group
from oracles.test_fleet_evaluate import TOPICS, assert_rows_equal, random_group
from support.fleet_tables import members_table, parts_table

PY_LABELS = ["lag-aware", "fair", "failover", "lag-aware:sticky", "lag-aware:per-topic", "lag-aware:global"]
SEEN: Counter[str] = Counter()


def _sharing(subs: dict[str, tuple[int, ...]]) -> list[int]:
    """Which topics share one tuple object: each topic's index of the first topic with its tuple."""
    first: dict[int, int] = {}
    return [first.setdefault(id(v), k) for k, v in enumerate(subs.values())]


def check_inputs(inputs: Inputs) -> None:
    members = inputs.members
    ids = sorted(members)
    assert inputs.ids == ids
    want = subscribers_by_topic(ids, [members[i].topics for i in ids], inputs.partitions_per_topic)
    got = inputs.subs
    assert type(got) is dict
    assert list(got.items()) == list(want.items())  # same keys in the same order, same tuples
    assert all(type(v) is tuple and all(type(i) is int for i in v) for v in got.values())
    assert _sharing(got) == _sharing(want)
    # the lag arrays of every topic, as lag-aware derives them from ``lags``
    lags, partitions_per_topic = inputs.lags or {}, inputs.partitions_per_topic
    arrays = {t: [lags.get((t, p), 0) for p in range(n)] for t, n in partitions_per_topic.items()}
    assert inputs.shared[TOPIC_LAGS] == {t: a if any(a) else None for t, a in arrays.items()}
    SEEN["lagged"] += any(a is not None for a in inputs.shared[TOPIC_LAGS].values())
    SEEN["calls"] += 1
    SEEN["shared"] += len(set(_sharing(want))) < len(want)
    SEEN["unsorted"] += list(want) != sorted(want)
    SEEN["skipped"] += any(t not in want for i in ids for t in members[i].topics)


def probing(labels: list[str]) -> dict:
    out = {}
    for label, (fn, reads) in python_strategies(labels).items():

        def probe(inputs: Inputs, _fn=fn, **options):
            check_inputs(inputs)
            return _fn(inputs, **options)

        out[label] = (probe, reads)
    return out


@pytest.mark.parametrize("seed", range(80))
def test_core_derived_inputs_equal_the_python_derivation(seed):
    rng = random.Random(seed)
    m, p = random_group(rng, bad=seed % 4 == 0)
    labels = rng.sample(["range", "sticky", *PY_LABELS], rng.randint(1, 5))
    kw = dict(churn_rounds=rng.choice([0, 2, 4]), with_assignment=rng.random() < 0.5, seed=seed)
    got = evaluate_group_table("k", f"g{seed}", m, p, labels, prepared=probing(labels), **kw)
    assert_rows_equal(got, evaluate_group("k", f"g{seed}", m, p, labels, **kw), f"seed {seed}")


def big_group(rng: random.Random, n: int) -> tuple[pa.Table, pa.Table]:
    """Many members over a few distinct subscriptions (tuples shared between topics), some naming
    a topic without partitions rows, ids in random order."""
    topics = TOPICS + [f"x{k}" for k in range(6)]
    kinds = [
        sorted(rng.sample(topics, rng.randint(1, 4))) + (["nometa"] if rng.random() < 0.2 else []) for _ in range(5)
    ]
    members = [
        {
            "member_id": f"m{rng.randrange(10**6):06d}-{i}",
            "topics": rng.choice(kinds),
            "generation": 3,
            "owned_partitions": [{"topic": rng.choice(topics), "partition": rng.randrange(20)} for _ in range(3)],
            "user_data": rng.choice([None, b"\x00\x00\x00\x02", b"\x00\x00\x00\x07"]),
        }
        for i in range(n)
    ]
    parts = [
        {"topic": t, "partition": q, "end_offset": rng.randint(0, 10**6), "committed": rng.randint(0, 10**5)}
        for t in topics
        for q in range(rng.randint(1, 20))
    ]
    return members_table(members), parts_table(parts)


@pytest.mark.parametrize("seed", range(12))
def test_core_derived_inputs_on_bigger_groups_with_churn(seed):
    rng = random.Random(1000 + seed)
    m, p = big_group(rng, rng.randint(20, 120))
    kw = dict(churn_rounds=rng.randint(3, 6), with_assignment=True, seed=seed)
    got = evaluate_group_table("k", "big", m, p, PY_LABELS, prepared=probing(PY_LABELS), **kw)
    assert set(got.column("status").to_pylist()) == {"ok"}
    assert_rows_equal(got, evaluate_group("k", "big", m, p, PY_LABELS, **kw), f"big {seed}")


def test_the_checks_above_are_not_vacuous():
    """The probes ran, on inputs where order, sharing and skipped topics could go wrong."""
    SEEN.clear()
    for seed in range(12):
        rng = random.Random(1000 + seed)
        m, p = big_group(rng, rng.randint(20, 120))
        evaluate_group_table("k", "big", m, p, ["fair"], prepared=probing(["fair"]), churn_rounds=3, seed=seed)
    assert SEEN["calls"] == 12 * 4
    assert SEEN["shared"] > 0 and SEEN["unsorted"] > 0 and SEEN["skipped"] > 0 and SEEN["lagged"] > 0, SEEN
