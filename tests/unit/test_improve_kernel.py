"""The Rust improvement pass of ``lag-aware`` against the Python class it replaced.

``lag_aware._improve`` runs ``_core.lag_improve``; the Python class that shipped before it lives in
``tests/support/lag_aware_oracle.py`` (``LagImprover``, exact halves). Here both run on seeded random
inputs — placements far from balanced, lags with ties, zeros and hot partitions, lags up to
2**63 - 1 whose sums leave int64, shared and distinct subscriptions, per-topic and global count
rules, frozen partitions and minimum gains, groups large enough to hit the round limit and the
work budget — and must agree exactly: moves, owners and loads. Then the whole strategy with the
kernel and with the oracle (every mode, sticky too).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

import kassign
from kassign import Member, _core
from kassign.assignors import lag_aware
from kassign.assignors._greedy import subscribers_by_topic
from support import lag_aware_oracle as oracle


def random_case(rng: random.Random, big: bool = False) -> dict[str, Any]:
    n = rng.randint(60, 200) if big else rng.randint(1, 40)
    topics = [f"t{k}" for k in range(rng.randint(1, 2 if big else 8))]
    sizes = [3000, 8000, 20000] if big else [1, 2, 3, 5, 8, 13, 40, 100]
    partitions_per_topic = {t: rng.choice(sizes) for t in topics}
    shapes = [tuple(sorted(rng.sample(topics, rng.randint(1, len(topics))))) for _ in range(rng.randint(1, 4))]
    subs = subscribers_by_topic(
        [f"m{i:03d}" for i in range(n)], [rng.choice(shapes) for _ in range(n)], partitions_per_topic
    )
    hi = rng.choice([1, 3, 100, 10**6, 10**12, 2**62])
    arrays: dict[str, list[int]] = {}
    for t in subs:
        if rng.random() < 0.8:
            zeros = rng.random() * 0.5
            arr = [0 if rng.random() < zeros else rng.randint(0, hi) for _ in range(partitions_per_topic[t])]
            if rng.random() < 0.3:
                arr[rng.randrange(len(arr))] = min(hi * rng.randint(5, 50), 2**63 - 1)  # a hot partition
            if any(arr):
                arrays[t] = arr
    # A placement skewed towards a few members of each topic (far from balanced).
    owners: dict[str, list[int]] = {}
    order = list(subs)
    rng.shuffle(order)
    for t in order:
        s = subs[t]
        favourites = rng.sample(s, min(len(s), rng.randint(1, 3)))
        crowd = 0.95 if big else 0.6
        owners[t] = [
            rng.choice(favourites) if rng.random() < crowd else rng.choice(s) for _ in range(partitions_per_topic[t])
        ]
    load = [0] * n
    total = top = 0
    for t, arr in arrays.items():
        for p, x in enumerate(arr):
            load[owners[t][p]] += x
        total += sum(arr)
        top = max(top, max(arr))
    limit = max(top, -(-total // n)) if rng.random() < 0.8 else rng.randint(0, max(top, 1))
    overall = rng.random() < 0.4
    frozen = None
    if rng.random() < 0.4:
        frozen = {t: [rng.random() < 0.3 for _ in range(partitions_per_topic[t])] for t in subs if rng.random() < 0.7}
    need = rng.choice([0.0, 0.0, 0.01, 0.05, 0.3, 1.0])
    phases = [(0.0, frozen)] if frozen is None or rng.random() < 0.3 else [(0.0, frozen), (need, None)]
    if rng.random() < 0.15:
        phases = [(need, None)]
    if big:
        phases = [(0.0, None)]
    return dict(n=n, subs=subs, owners=owners, arrays=arrays, load=load, overall=overall, limit=limit, phases=phases)


def both(case: dict[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    a, b = copy.deepcopy(case), copy.deepcopy(case)
    new = lag_aware._improve(**a)
    old = oracle.improve(**b)
    return (new, a["owners"]), (old, b["owners"])


@pytest.mark.parametrize("seed", range(400))
def test_improve_kernel_equals_python(seed: int) -> None:
    new, old = both(random_case(random.Random(seed)))
    assert new == old


@pytest.mark.parametrize("seed", range(4))
def test_improve_kernel_equals_python_large(seed: int) -> None:
    """Long per-member lists (thousands of partitions on a few members): the swap sample and the
    partner limits bind."""
    case = random_case(random.Random(10_000 + seed), big=True)
    new, old = both(case)
    assert new == old
    assert new[0][0] > 0  # the pass did move partitions


TIGHT = [
    # (rounds per member, extra rounds, partners, partners while none helps, swap sample, work per
    # partition, extra work): small enough that the round limit or the work budget ends the pass
    (0, 5, 6, 64, 64, 0.25, 100_000),
    (4, 64, 2, 3, 4, 0.25, 100_000),
    (4, 64, 6, 64, 64, 0.01, 50),
    (4, 64, 6, 64, 8, 0.0, 0),
    (1, 1, 1, 1, 1, 0.5, 10),
]


@pytest.mark.parametrize("tight", TIGHT)
@pytest.mark.parametrize("seed", range(25))
def test_improve_kernel_equals_python_with_tight_limits(
    seed: int, tight: tuple[Any, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bounds come from the module's constants for both implementations: with small ones the
    pass stops on rounds or work, and both must stop at the same point."""
    names = ("_ROUNDS_PER_MEMBER", "_ROUNDS_EXTRA", "_PARTNERS", "_PARTNERS_WIDE", "_SWAP_SAMPLE")
    for name, value in zip((*names, "_WORK_PER_PARTITION", "_WORK_EXTRA"), tight):
        monkeypatch.setattr(lag_aware, name, value)
        monkeypatch.setattr(oracle, name, value)
    new, old = both(random_case(random.Random(20_000 + seed), big=seed % 5 == 0))
    assert new == old


def test_kernel_moves_something_on_most_cases() -> None:
    """The random cases are not trivial: most need the pass (guards the test above)."""
    moved = sum(both(random_case(random.Random(seed)))[1][0][0] > 0 for seed in range(100))
    assert moved >= 40


LABELS = [
    {},
    {"mode": "global"},
    {"mode": "per-topic", "improve": True},
    {"sticky": True},
    {"sticky": True, "min_gain": 0.0},
    {"mode": "per-topic", "sticky": True, "improve": True, "min_gain": 0.2},
    {"max_skew": 1},
]


@pytest.mark.parametrize("seed", range(80))
def test_lag_aware_with_and_without_kernel(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5000 + seed)
    n = rng.randint(1, 40)
    topics = [f"t{k}" for k in range(rng.randint(1, 6))]
    partitions_per_topic = {t: rng.choice([1, 2, 3, 7, 16, 50]) for t in topics}
    members = {}
    for i in range(n):
        owned = [
            kassign.TopicPartition(t, p) for t in topics for p in range(partitions_per_topic[t]) if rng.random() < 0.2
        ]
        members[f"m{rng.randint(0, 10**6):07d}-{i}"] = Member(
            topics=rng.sample(topics, rng.randint(1, len(topics))),
            owned_partitions=owned,
            generation=rng.randint(0, 3),
        )
    hi = rng.choice([5, 1000, 10**9, 2**60])
    lags = {(t, p): rng.randint(0, hi) for t in topics for p in range(partitions_per_topic[t]) if rng.random() < 0.8}
    if lags and rng.random() < 0.5:
        lags[rng.choice(list(lags))] = min(hi * 40, 2**63 - 1)  # a hot partition
    results = [kassign.assign_lag_aware(members, partitions_per_topic, lags=lags, **options) for options in LABELS]
    with monkeypatch.context() as m:
        m.setattr(lag_aware, "_improve", oracle.improve)
        for options, expected in zip(LABELS, results):
            assert kassign.assign_lag_aware(members, partitions_per_topic, lags=lags, **options) == expected, options


LIMITS = (4, 64, 6, 64, 64, 0.25, 100_000)


def test_sums_beyond_int64_are_exact() -> None:
    """Lags of 2**63 - 1: loads beyond int64 (once the kernel's limit, with a Python fallback)."""
    big = 2**63 - 1
    case = dict(
        n=3,
        subs={"a": (0, 1, 2)},
        owners={"a": [0, 0, 0, 0, 1]},
        arrays={"a": [big, big, 7, 3, 1]},
        load=[2 * big + 10, 1, 0],
        overall=False,
        limit=big,
        phases=[(0.0, None)],
    )
    new, old = both(case)
    assert new == old
    moved, after = new[0]
    assert moved > 0 and max(after) == big + 10  # one hot partition left a, exactly


def test_kernel_rejects_owners_out_of_range() -> None:
    with pytest.raises(ValueError, match="do not describe a placement"):
        _core.lag_improve([(0, 1)], [[0, 5]], [[3, 1]], [0], [3, 1], False, 0, [(0.0, None)], LIMITS)
    with pytest.raises(ValueError, match="do not describe a placement"):
        _core.lag_improve([(0, 1)], [[0, -1]], [[3, 1]], [0], [3, 1], False, 0, [(0.0, None)], LIMITS)
