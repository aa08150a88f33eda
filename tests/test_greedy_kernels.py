"""The Rust placement kernels of ``fair`` and ``lag-aware`` against the Python code they replace.

``_core.greedy_deal`` runs ``kassign.assignors._greedy.deal_global``'s loop and
``_core.greedy_carried`` ``lag_aware._carried``'s (skew 0); the Python implementations are kept
(``_deal_global_py``, ``_carried_py``) as the reference and the fallback. Here both run on seeded
random inputs (shared and distinct eligible sets, ties in lag, topics without lag, sticky presets,
starting loads) and must agree exactly, owners and loads; then whole strategies with and without
the kernels; then the fallbacks (lag sums beyond int64, a fixed owner outside its topic).
"""

from __future__ import annotations

import random

import pytest

import kassign
from kassign import Member, _core
from kassign.assignors import _greedy, lag_aware
from kassign.assignors._greedy import _deal_global_py, deal_global, subscribers_by_topic


def random_subs(rng: random.Random) -> tuple[int, dict[str, tuple[int, ...]], dict[str, int]]:
    n = rng.randint(1, 30)
    topics = [f"t{k}" for k in range(rng.randint(1, 10))]
    ppt = {t: rng.choice([0, 1, 2, 3, 5, 8, 13, 40]) for t in topics}
    shapes = [tuple(sorted(rng.sample(topics, rng.randint(1, len(topics))))) for _ in range(rng.randint(1, 4))]
    topics_of = [rng.choice(shapes) for _ in range(n)]
    subs = subscribers_by_topic([f"m{i:03d}" for i in range(n)], topics_of, ppt)
    return n, subs, ppt


def random_arrays(rng: random.Random, subs: dict[str, tuple[int, ...]], ppt: dict[str, int]) -> dict[str, list[int]]:
    if rng.random() < 0.2:
        return {}
    hi = rng.choice([1, 3, 1000, 10**12])
    arrays = {}
    for t in subs:
        if rng.random() < 0.7:
            arr = [rng.randint(0, hi) if rng.random() < 0.8 else 0 for _ in range(ppt[t])]
            if any(arr):
                arrays[t] = arr
    return arrays


@pytest.mark.parametrize("seed", range(300))
def test_deal_global_kernel_equals_python(seed: int) -> None:
    rng = random.Random(seed)
    n, subs, ppt = random_subs(rng)
    arrays = random_arrays(rng, subs, ppt)
    assert deal_global(n, subs, ppt, arrays) == _deal_global_py(n, subs, ppt, arrays)


def random_preset(rng: random.Random, subs: dict[str, tuple[int, ...]], ppt: dict[str, int]) -> dict[str, list[int]]:
    preset = {}
    for t, s in subs.items():
        if rng.random() < 0.5:
            free = rng.random()
            preset[t] = [-1 if rng.random() < free else rng.choice(s) for _ in range(ppt[t])]
    return preset


@pytest.mark.parametrize("seed", range(300))
def test_carried_kernel_equals_python(seed: int) -> None:
    rng = random.Random(seed)
    n, subs, ppt = random_subs(rng)
    arrays = random_arrays(rng, subs, ppt)
    preset = random_preset(rng, subs, ppt) if rng.random() < 0.5 else None
    start = [rng.choice([0, 0, 5, 10**6]) for _ in range(n)] if rng.random() < 0.5 else None
    load_new = list(start) if start is not None else None
    load_old = list(start) if start is not None else None
    new = lag_aware._carried(n, subs, ppt, arrays, 0, load=load_new, preset=preset)
    old = lag_aware._carried_py(n, subs, ppt, arrays, 0, load=load_old, preset=preset)
    assert new == old
    assert list(new) == list(old)  # topic order too
    assert load_new == load_old


def _disable_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    def overflow(*args: object, **kwargs: object) -> None:
        raise OverflowError("kernels disabled")

    monkeypatch.setattr(_core, "greedy_deal", overflow)
    monkeypatch.setattr(_core, "greedy_carried", overflow)


LABELS = [
    ("fair", {}),
    ("lag-aware", {}),
    ("lag-aware", {"mode": "global"}),
    ("lag-aware", {"mode": "per-topic", "sticky": True}),
    ("lag-aware", {"sticky": True}),
    ("lag-aware", {"max_skew": 1}),
]


@pytest.mark.parametrize("seed", range(60))
def test_strategies_with_and_without_kernels(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(1000 + seed)
    n, _, ppt = random_subs(rng)
    topics = list(ppt)
    members = {}
    for i in range(n):
        owned = [kassign.TopicPartition(t, p) for t in topics for p in range(ppt[t]) if rng.random() < 0.15]
        members[f"m{rng.randint(0, 10**6):07d}-{i}"] = Member(
            topics=rng.sample(topics, rng.randint(1, len(topics))),
            owned_partitions=owned,
            generation=rng.randint(0, 3),
        )
    lags = {(t, p): rng.randint(0, 500) for t in topics for p in range(ppt[t]) if rng.random() < 0.8}
    results = []
    for label, options in LABELS:
        results.append(kassign.assign(label, members, ppt, lags=lags, **options))
    with monkeypatch.context() as m:
        _disable_kernels(m)
        for (label, options), expected in zip(LABELS, results):
            assert kassign.assign(label, members, ppt, lags=lags, **options) == expected, (label, options)


def test_overflowing_lags_fall_back_to_python() -> None:
    subs = {"a": (0, 1), "b": (1,)}
    ppt = {"a": 3, "b": 2}
    for big in (2**63 - 1, 2**70):
        arrays = {"a": [big, big, 1], "b": [big, 0]}
        assert deal_global(2, subs, ppt, arrays) == _deal_global_py(2, subs, ppt, arrays)
        load_new, load_old = [0, 0], [0, 0]
        new = lag_aware._carried(2, subs, ppt, arrays, 0, load=load_new)
        old = lag_aware._carried_py(2, subs, ppt, arrays, 0, load=load_old)
        assert new == old and load_new == load_old
        assert max(load_new) > 2**63 - 1  # the sum the kernel cannot hold
    with pytest.raises(OverflowError):
        _core.greedy_deal(2, [subs["a"], subs["b"]], [3, 2], [2**63 - 1, 2**63 - 1, 1, 2**63 - 1, 0])


def test_fixed_owner_outside_its_topic_raises_as_before() -> None:
    subs = {"a": (0, 2)}
    with pytest.raises(KeyError):
        lag_aware._carried_py(3, subs, {"a": 2}, {}, 0, preset={"a": [1, -1]})
    with pytest.raises(KeyError):
        lag_aware._carried(3, subs, {"a": 2}, {}, 0, preset={"a": [1, -1]})


def test_kernel_argument_checks() -> None:
    with pytest.raises(ValueError):
        _core.greedy_deal(2, [(0, 5)], [1])  # member out of range
    with pytest.raises(ValueError):
        _core.greedy_deal(2, [(1, 0)], [1])  # not ascending
    with pytest.raises(ValueError):
        _core.greedy_deal(2, [(0, 1)], [2], [1])  # one lag per partition
    with pytest.raises(ValueError):
        _core.greedy_carried([((0,), 2, [1], None)], [0])
    assert _greedy.Balancer  # the Python reference's structure is still the module's
