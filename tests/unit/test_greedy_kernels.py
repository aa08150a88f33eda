"""The Rust placement kernels of ``fair`` and ``lag-aware`` against the Python code they replaced.

``_core.greedy_deal`` runs ``kassign.assignors._greedy.deal_global``'s loop,
``_core.greedy_carry_lag`` ``lag_aware._carry_lag``'s, ``_core.greedy_per_topic``
``lag_aware._per_topic``'s and ``_core.greedy_keep`` the keep step of ``lag_aware._sticky``, with and
without ``max_skew``; the Python implementations that shipped before them live in
``tests/support/lag_aware_oracle.py``. Here both run on seeded random inputs (shared and distinct
eligible sets, ties in lag, topics without lag, lags up to 2**63 - 1 whose sums leave int64, sticky
presets, starting loads, skews) and must agree exactly, owners and loads; then whole strategies
with the kernels and with the oracles; then the kernels' argument checks.
"""

from __future__ import annotations

import random
from array import array

import pytest

import kassign
from kassign import Member, _core
from kassign.assignors import fair, lag_aware
from kassign.assignors._greedy import Inputs, deal_global, subscribers_by_topic
from support import lag_aware_oracle as oracle


def random_subs(rng: random.Random) -> tuple[int, dict[str, tuple[int, ...]], dict[str, int]]:
    n = rng.randint(1, 30)
    topics = [f"t{k}" for k in range(rng.randint(1, 10))]
    partitions_per_topic = {t: rng.choice([0, 1, 2, 3, 5, 8, 13, 40]) for t in topics}
    shapes = [tuple(sorted(rng.sample(topics, rng.randint(1, len(topics))))) for _ in range(rng.randint(1, 4))]
    topics_of = [rng.choice(shapes) for _ in range(n)]
    subs = subscribers_by_topic([f"m{i:03d}" for i in range(n)], topics_of, partitions_per_topic)
    return n, subs, partitions_per_topic


def random_arrays(
    rng: random.Random, subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int]
) -> dict[str, list[int]]:
    if rng.random() < 0.2:
        return {}
    hi = rng.choice([1, 3, 1000, 10**12, 2**63 - 1])
    arrays = {}
    for t in subs:
        if rng.random() < 0.7:
            arr = [rng.randint(0, hi) if rng.random() < 0.8 else 0 for _ in range(partitions_per_topic[t])]
            if any(arr):
                arrays[t] = arr
    return arrays


@pytest.mark.parametrize("seed", range(300))
def test_deal_global_kernel_equals_python(seed: int) -> None:
    rng = random.Random(seed)
    n, subs, partitions_per_topic = random_subs(rng)
    arrays = random_arrays(rng, subs, partitions_per_topic)
    assert oracle.owner_lists(deal_global(n, subs, partitions_per_topic, arrays)) == oracle.deal_global(
        n, subs, partitions_per_topic, arrays
    )


def sharing(subs: dict[str, tuple[int, ...]]) -> list[int]:
    """Which topics share one tuple object: each topic's first topic with the same object."""
    first: dict[int, int] = {}
    return [first.setdefault(id(s), k) for k, s in enumerate(subs.values())]


@pytest.mark.parametrize("seed", range(300))
def test_subscribers_by_topic_kernel_equals_python(seed: int) -> None:
    """Topics missing or empty, unsorted and repeated subscriptions, shared and equal-but-distinct
    subscription objects: the same dict, in the same order, with the same tuple sharing."""
    rng = random.Random(13000 + seed)
    topics = [f"t{k}" for k in range(rng.randint(1, 12))]
    partitions_per_topic = {t: rng.choice([0, 1, 4]) for t in topics if rng.random() < 0.85}
    shapes = [tuple(rng.sample(topics, rng.randint(0, len(topics)))) for _ in range(rng.randint(1, 5))]
    topics_of = [rng.choice(shapes) if rng.random() < 0.7 else tuple(rng.choice(shapes)[::-1]) for _ in range(40)]
    topics_of = topics_of[: rng.randint(0, 40)]
    ids = [f"m{i:03d}" for i in range(len(topics_of))]
    new = subscribers_by_topic(ids, topics_of, partitions_per_topic)
    old = oracle.subscribers_by_topic(ids, topics_of, partitions_per_topic)
    assert new == old
    assert list(new) == list(old)
    assert sharing(new) == sharing(old)


def random_preset(
    rng: random.Random, subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int]
) -> dict[str, list[int]]:
    preset = {}
    for t, s in subs.items():
        if rng.random() < 0.5:
            free = rng.random()
            preset[t] = [-1 if rng.random() < free else rng.choice(s) for _ in range(partitions_per_topic[t])]
    return preset


@pytest.mark.parametrize("seed", range(300))
def test_carry_lag_kernel_equals_python(seed: int) -> None:
    rng = random.Random(seed)
    n, subs, partitions_per_topic = random_subs(rng)
    arrays = random_arrays(rng, subs, partitions_per_topic)
    preset = random_preset(rng, subs, partitions_per_topic) if rng.random() < 0.5 else None
    start = [rng.choice([0, 0, 5, 10**6, 2**70]) for _ in range(n)] if rng.random() < 0.5 else None
    assert_carry_lag_equal(n, subs, partitions_per_topic, arrays, 0, preset, start)


def assert_carry_lag_equal(
    n: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, list[int]],
    skew: int,
    preset: dict[str, list[int]] | None,
    start: list[int] | None,
) -> None:
    """``lag_aware._carry_lag`` and the oracle agree: owners, topic order and loads after."""
    load_new = list(start) if start is not None else None
    load_old = list(start) if start is not None else None
    new = oracle.owner_lists(
        lag_aware._carry_lag(n, subs, partitions_per_topic, arrays, skew, load=load_new, preset=preset)
    )
    old = oracle.carry_lag(n, subs, partitions_per_topic, arrays, skew, load=load_old, preset=preset)
    assert new == old
    assert list(new) == list(old)  # topic order too
    assert load_new == load_old


@pytest.mark.parametrize("seed", range(200))
def test_skewed_placement_kernels_equal_python(seed: int) -> None:
    """With ``max_skew`` the kernels place as the Python Balancer did."""
    rng = random.Random(7000 + seed)
    n, subs, partitions_per_topic = random_subs(rng)
    arrays = random_arrays(rng, subs, partitions_per_topic)
    skew = rng.choice([1, 1, 2, 3, 7, 10**30])
    assert oracle.owner_lists(deal_global(n, subs, partitions_per_topic, arrays, skew)) == oracle.deal_global(
        n, subs, partitions_per_topic, arrays, skew
    )
    preset = random_preset(rng, subs, partitions_per_topic) if rng.random() < 0.5 else None
    assert_carry_lag_equal(n, subs, partitions_per_topic, arrays, skew, preset, [0] * n)


@pytest.mark.parametrize("seed", range(200))
def test_per_topic_kernel_equals_python(seed: int) -> None:
    rng = random.Random(9000 + seed)
    n, subs, partitions_per_topic = random_subs(rng)
    arrays = random_arrays(rng, subs, partitions_per_topic)
    skew = rng.choice([0, 0, 1, 2, 5, 10**30])
    new = oracle.owner_lists(lag_aware._per_topic(n, subs, partitions_per_topic, arrays, skew))
    assert new == oracle.per_topic(subs, partitions_per_topic, arrays, skew)
    assert list(new) == list(subs)


def random_members(rng: random.Random, n: int, partitions_per_topic: dict[str, int]) -> dict[str, Member]:
    """``n`` members with random subscriptions, owned partitions (some claimed twice, some out of
    range or of unsubscribed topics) and generations."""
    topics = list(partitions_per_topic)
    members = {}
    for i in range(n):
        own_rate = rng.choice([0.0, 0.1, 0.4, 0.9])
        owned = [
            kassign.TopicPartition(t, p)
            for t in topics
            for p in range(partitions_per_topic[t] + 1)
            if rng.random() < own_rate
        ]
        members[f"m{rng.randint(0, 10**6):07d}-{i}"] = Member(
            topics=rng.sample(topics, rng.randint(1, len(topics))),
            owned_partitions=owned,
            generation=rng.randint(0, 3),
        )
    return members


@pytest.mark.parametrize("seed", range(200))
def test_sticky_kernels_equal_python(seed: int) -> None:
    """The keep step and the placement of the rest, per-topic and proposal modes, with skews."""
    rng = random.Random(11000 + seed)
    n, _, partitions_per_topic = random_subs(rng)
    members = random_members(rng, n, partitions_per_topic)
    inputs = Inputs(members, partitions_per_topic)
    subs = inputs.subs
    arrays = random_arrays(rng, subs, partitions_per_topic)
    skew = rng.choice([0, 0, 1, 3, 10**30])
    for mode in ("proposal", "per-topic"):
        owners, kept, frozen = lag_aware._sticky(inputs, subs, partitions_per_topic, arrays, skew, mode)
        new = (oracle.owner_lists(owners), kept, {t: [bool(x) for x in f] for t, f in frozen.items()})
        old = oracle.sticky(inputs, subs, partitions_per_topic, arrays, skew, mode)
        assert new == old, mode


def _use_oracles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lag_aware, "_carry_lag", oracle.carry_lag)
    monkeypatch.setattr(lag_aware, "deal_global", oracle.deal_global)
    monkeypatch.setattr(fair, "deal_global", oracle.deal_global)
    monkeypatch.setattr(lag_aware, "_improve", oracle.improve)
    monkeypatch.setattr(lag_aware, "_sticky", oracle.sticky)

    def per_topic_oracle(
        n: int,
        subs: dict[str, tuple[int, ...]],
        partitions_per_topic: dict[str, int],
        arrays: dict[str, list[int]],
        skew: int,
    ) -> dict[str, list[int]]:
        return oracle.per_topic(subs, partitions_per_topic, arrays, skew)

    monkeypatch.setattr(lag_aware, "_per_topic", per_topic_oracle)


LABELS = [
    ("fair", {}),
    ("lag-aware", {}),
    ("lag-aware", {"mode": "global"}),
    ("lag-aware", {"mode": "per-topic", "sticky": True}),
    ("lag-aware", {"sticky": True}),
    ("lag-aware", {"max_skew": 1}),
    ("lag-aware", {"mode": "per-topic"}),
    ("lag-aware", {"mode": "per-topic", "max_skew": 2}),
    ("lag-aware", {"mode": "global", "max_skew": 1}),
    ("lag-aware", {"mode": "global", "max_skew": 10**30}),
    ("lag-aware", {"sticky": True, "max_skew": 2}),
    ("lag-aware", {"mode": "per-topic", "sticky": True, "max_skew": 1}),
]


@pytest.mark.parametrize("seed", range(60))
def test_strategies_with_kernels_and_with_oracles(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(1000 + seed)
    n, _, partitions_per_topic = random_subs(rng)
    topics = list(partitions_per_topic)
    members = {}
    for i in range(n):
        owned = [
            kassign.TopicPartition(t, p) for t in topics for p in range(partitions_per_topic[t]) if rng.random() < 0.15
        ]
        members[f"m{rng.randint(0, 10**6):07d}-{i}"] = Member(
            topics=rng.sample(topics, rng.randint(1, len(topics))),
            owned_partitions=owned,
            generation=rng.randint(0, 3),
        )
    hi = rng.choice([500, 2**63 - 1])
    lags = {(t, p): rng.randint(0, hi) for t in topics for p in range(partitions_per_topic[t]) if rng.random() < 0.8}
    results = []
    for label, options in LABELS:
        results.append(kassign.assign(label, members, partitions_per_topic, lags=lags, **options))
    with monkeypatch.context() as m:
        _use_oracles(m)
        for (label, options), expected in zip(LABELS, results):
            assert kassign.assign(label, members, partitions_per_topic, lags=lags, **options) == expected, (
                label,
                options,
            )


def test_sums_beyond_int64_are_exact() -> None:
    subs = {"a": (0, 1), "b": (1,)}
    partitions_per_topic = {"a": 3, "b": 2}
    big = 2**63 - 1
    arrays = {"a": [big, big, 1], "b": [big, 0]}
    assert oracle.owner_lists(deal_global(2, subs, partitions_per_topic, arrays)) == oracle.deal_global(
        2, subs, partitions_per_topic, arrays
    )
    load_new, load_old = [0, 0], [0, 0]
    new = oracle.owner_lists(lag_aware._carry_lag(2, subs, partitions_per_topic, arrays, 0, load=load_new))
    old = oracle.carry_lag(2, subs, partitions_per_topic, arrays, 0, load=load_old)
    assert new == old and load_new == load_old
    assert sorted(load_new) == [big + 1, 2 * big]  # b's partition on member 1, then a's round


def test_lags_beyond_int64_are_rejected() -> None:
    members = {"m": Member(topics=["a"])}
    with pytest.raises(ValueError, match="int64"):
        kassign.assign("lag-aware", members, {"a": 1}, lags={("a", 0): 2**63})
    assert kassign.assign("lag-aware", members, {"a": 1}, lags={("a", 0): 2**63 - 1}) == {
        "m": [kassign.TopicPartition("a", 0)]
    }


def test_fixed_owner_outside_its_topic_raises() -> None:
    subs = {"a": (0, 2)}
    with pytest.raises(KeyError):
        oracle.carry_lag(3, subs, {"a": 2}, {}, 0, preset={"a": [1, -1]})
    with pytest.raises(LookupError):
        lag_aware._carry_lag(3, subs, {"a": 2}, {}, 0, preset={"a": [1, -1]})
    with pytest.raises(LookupError):
        lag_aware._carry_lag(3, subs, {"a": 2}, {}, 2, preset={"a": [1, -1]})
    with pytest.raises(LookupError):
        lag_aware._per_topic(3, subs, {"a": 2}, {"a": [1, 2]}, 0, preset={"a": [1, -1]})


def test_kernel_argument_checks() -> None:
    with pytest.raises(ValueError):
        _core.greedy_deal(2, [(0, 5)], [1])  # member out of range
    with pytest.raises(ValueError):
        _core.greedy_deal(2, [(1, 0)], [1])  # not ascending
    with pytest.raises(ValueError):
        _core.greedy_deal(2, [(0, 1)], [2], [[1]])  # one lag per partition
    with pytest.raises(ValueError):
        _core.greedy_carry_lag([((0,), 2, [1], None)], [0])
    with pytest.raises(ValueError):
        _core.greedy_carry_lag([((0,), 1, [-1], None)], [0])  # negative lag
    with pytest.raises(OverflowError):
        _core.greedy_deal(2, [(0, 1)], [2], None, -1)  # a skew is an unsigned int
    with pytest.raises(ValueError):
        _core.greedy_per_topic([((0, 1), 2, [1], None)], 2)  # one lag per partition
    with pytest.raises(ValueError):
        _core.greedy_keep([((0, 1), 2, None, {0: [2]})], 2)  # partition out of range
    with pytest.raises(ValueError):
        _core.greedy_keep([((0, 5), 2, None, {})], 2)  # member out of range
    with pytest.raises(ValueError):
        _core.owner_positions([array("i", [0, 2])], [1, 0])  # owner 2 of 2 members
    with pytest.raises(ValueError):
        _core.lag_summary([array("q", [3, -1])])  # negative lag
    with pytest.raises(TypeError):
        _core.greedy_loads(2, [array("d", [0.0])], [None])  # owners are ints


def test_array_and_list_columns_read_alike() -> None:
    """Owners and lags given as ``array('i')``/``array('q')`` (read through their bytes) and as
    lists (read element by element) give the same results; owners come back as ``array('i')``."""
    big = 2**63 - 1
    owners, lags = [0, 1, 0, 1], [big, 5, 7, 0]
    assert _core.greedy_loads(2, [array("i", owners)], [array("q", lags)]) == _core.greedy_loads(2, [owners], [lags])
    assert _core.greedy_loads(2, [array("i", owners)], [array("q", lags)]) == [big + 7, 5]
    assert _core.lag_summary([array("q", lags), lags, array("i", [2, 9])]) == [
        (big, big + 12),
        (big, big + 12),
        (9, 11),
    ]
    out = _core.greedy_per_topic([((0, 1), 4, array("q", lags), None)], 2)
    assert out == _core.greedy_per_topic([((0, 1), 4, lags, None)], 2)
    assert all(isinstance(a, array) and a.typecode == "i" for a in out)
    renumbered = _core.owner_positions([array("i", owners), [1, -1]], [5, 3])
    assert renumbered == [array("i", [5, 3, 5, 3]), array("i", [3, -1])]
