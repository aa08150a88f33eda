"""The oracles of tests/support/oracles.py can fail: each rejects a hand-made bad assignment and accepts a
good one, and the independent oracles agree with each other on random inputs (no kassign call
computes anything here except where a test says it feeds a fake assign function)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign import Member
from support import oracles as O


def M(topics, owned=(), gen=-1, rack=None, user_data=None):
    return Member(topics, owned_partitions=owned, generation=gen, rack=rack, user_data=user_data)


def tps(*names):
    out = []
    for n in names:
        t, p = n.rsplit("-", 1)
        out.append((t, int(p)))
    return sorted(out)


# ---------------------------------------------------------------- validity / completeness


MEMBERS = {"a": M(["t"]), "b": M(["t", "u"])}
TOPICS = {"t": 3, "u": 1}
GOOD = {"a": tps("t-0", "t-1"), "b": tps("t-2", "u-0")}


def test_validity_accepts_good():
    O.check_validity(MEMBERS, TOPICS, GOOD)
    O.check_completeness(MEMBERS, TOPICS, GOOD)


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"a": tps("t-0", "t-1", "u-0"), "b": tps("t-2")}, "does not subscribe"),
        ({"a": tps("t-0", "t-1"), "b": tps("t-1", "t-2", "u-0")}, "assigned twice"),
        ({"a": tps("t-0", "t-3"), "b": tps("t-2", "u-0")}, "out of range"),
        ({"a": tps("t-0"), "b": tps("t-2", "x-0")}, "unknown topic"),
        ({"a": tps("t-0", "t-1")}, "missing"),
        ({"a": tps("t-0"), "b": [], "zz": []}, "unknown"),
        ({"a": [("t", 1), ("t", 0)], "b": tps("t-2", "u-0")}, "not sorted"),
        ({"a": [("t", -1)], "b": []}, "out of range"),
    ],
)
def test_validity_rejects(bad, message):
    with pytest.raises(O.OracleViolation, match=message):
        O.check_validity(MEMBERS, TOPICS, bad)


def test_completeness_rejects_missing_partition():
    with pytest.raises(O.OracleViolation, match="1 partitions unassigned"):
        O.check_completeness(MEMBERS, TOPICS, {"a": tps("t-0", "t-1"), "b": tps("t-2")})


def test_completeness_ignores_unsubscribed_and_missing_topics():
    members = {"a": M(["t", "ghost"])}
    O.check_completeness(members, {"t": 1, "other": 5, "empty": 0}, {"a": tps("t-0")})


# ---------------------------------------------------------------- balance


def test_uniform_balance():
    O.check_uniform_balance({"a": tps("t-0", "t-1"), "b": tps("t-2")})
    with pytest.raises(O.OracleViolation, match="unbalanced"):
        O.check_uniform_balance({"a": tps("t-0", "t-1", "t-2"), "b": []})


def test_starvation_example_has_a_cost_reducing_path():
    # docs/strategies/sticky.md: Java stops at [2, 1, 1, 0]; a two-hop chain ending at cNEW fixes it.
    members = {
        "c00": M(["t0", "t2"]),
        "c01": M(["t0", "t3"]),
        "c02": M(["t1", "t2"]),
        "cNEW": M(["t1", "t3"]),
    }
    topics = {"t0": 1, "t1": 1, "t2": 1, "t3": 1}
    java = {"c00": tps("t0-0", "t2-0"), "c01": tps("t3-0"), "c02": tps("t1-0"), "cNEW": []}
    path = O.find_cost_reducing_path(members, topics, java)
    # Two chains work: c00 -t0-> c01 -t3-> cNEW and c00 -t2-> c02 -t1-> cNEW.
    assert path in (["c00", "c01", "cNEW"], ["c00", "c02", "cNEW"])
    with pytest.raises(O.OracleViolation, match=r"cost-reducing path c00\(2\) -> c0[12]\(1\) -> cNEW\(0\)"):
        O.check_optimal_balance(members, topics, java)
    # Single-hop balance cannot see it: no member subscribed to c00's topics has fewer than 1.
    fixed = {"c00": tps("t0-0"), "c01": tps("t3-0"), "c02": tps("t2-0"), "cNEW": tps("t1-0")}
    O.check_optimal_balance(members, topics, fixed)
    with pytest.raises(O.OracleViolation, match="load vector not optimal"):
        O.check_optimal_stickiness(members, topics, java)
    O.check_optimal_stickiness(members, topics, fixed)


def test_unbalanced_but_optimal_heterogeneous():
    # b is the only subscriber of u: loads 4 vs 1 are optimal.
    members = {"a": M(["t"]), "b": M(["t", "u"])}
    r = {"a": tps("t-0"), "b": tps("u-0", "u-1", "u-2", "u-3")}
    O.check_optimal_balance(members, {"t": 1, "u": 4}, r)
    # ...but not when b also holds the t partition a could take.
    r2 = {"a": [], "b": tps("t-0", "u-0", "u-1", "u-2", "u-3")}
    with pytest.raises(O.OracleViolation):
        O.check_optimal_balance(members, {"t": 1, "u": 4}, r2)


# ---------------------------------------------------------------- ownership resolution


def test_resolve_ownership_java_highest_generation_vector():
    # AST testEnsurePartitionsAssignedToHighestGeneration.
    members = {
        "c10": M(["t1", "t2", "t3"], tps("t1-0", "t2-0", "t3-0"), 10),
        "c9": M(["t1", "t2", "t3"], tps("t1-1", "t2-1", "t3-1"), 9),
        "c8": M(["t1", "t2", "t3"], tps("t2-1", "t3-0", "t3-2"), 8),
    }
    r = O.resolve_ownership(members, {"t1": 3, "t2": 3, "t3": 3})
    assert r == {
        "c10": set(tps("t1-0", "t2-0", "t3-0")),
        "c9": set(tps("t1-1", "t2-1", "t3-1")),
        "c8": set(tps("t3-2")),
    }


def test_resolve_ownership_rules():
    members = {
        "a": M(["t"], [("t", 0), ("t", 0), ("t", 1), ("t", 9), ("gone", 0), ("u", 0)], 5),
        "b": M(["t", "u"], [("t", 1), ("t", 2), ("u", 0)], 5),
        "stale": M(["t"], [("t", 2), ("t", 3)], 2),
        "fresh": M(["t"]),
    }
    r = O.resolve_ownership(members, {"t": 4, "u": 1})
    # t-0 duplicated by a: kept once. t-1 contested at gen 5: nobody. t-9 out of range, gone-0
    # vanished, u-0 not subscribed by a (so b's u-0 claim is uncontested: filter first).
    assert r["a"] == {("t", 0)}
    assert r["b"] == {("t", 2), ("u", 0)}
    assert r["stale"] == {("t", 3)}  # t-2 lost to b's higher generation; t-3 uncontested
    assert r["fresh"] == set()
    r2 = O.resolve_ownership(members, {"t": 4, "u": 1}, filter_first=False)
    assert r2["b"] == {("t", 2)}  # a's invalid u-0 claim at gen 5 invalidates b's


# ---------------------------------------------------------------- stickiness


def test_uniform_bound_formula():
    # q = 2, r = 1 for P = 7, N = 3; h = (4, 3, 0): kept* = 2 + 2 + 0 + min(1, 2) = 5.
    resolved = {"a": set(tps("t-0", "t-1", "t-2", "t-3")), "b": set(tps("t-4", "t-5", "t-6")), "c": set()}
    assert O.uniform_kept_bound(resolved, 7, 3) == 5


def test_uniform_stickiness_rejects_needless_moves():
    members = {
        "a": M(["t"], tps("t-0", "t-1"), 1),
        "b": M(["t"], tps("t-2", "t-3"), 1),
        "c": M(["t"]),
    }
    topics = {"t": 4}
    good = {"a": tps("t-0", "t-1"), "b": tps("t-2"), "c": tps("t-3")}
    assert O.check_uniform_stickiness(members, topics, good) == (3, 3)
    bad = {"a": tps("t-0"), "b": tps("t-2", "t-3"), "c": tps("t-1")}  # balanced, but the wrong keeper
    assert O.check_uniform_stickiness(members, topics, bad) == (3, 3)  # still 3 kept: OK
    worse = {"a": tps("t-2", "t-3"), "b": tps("t-0"), "c": tps("t-1")}  # balanced, everything moved
    with pytest.raises(O.OracleViolation, match="kept 0 < kept\\* 3"):
        O.check_uniform_stickiness(members, topics, worse)
    unbalanced = {"a": tps("t-0", "t-1"), "b": tps("t-2", "t-3"), "c": []}
    with pytest.raises(O.OracleViolation, match="cannot be balanced"):
        O.check_uniform_stickiness(members, topics, unbalanced)


def test_optimal_stickiness_heterogeneous():
    # a on t, b on t and u; b owned t-0, t-1 and u-0, a owned nothing. Optimal loads 2/2;
    # the best keeps t-0 or t-1 plus u-0 on b and moves one t partition to a.
    members = {"a": M(["t"]), "b": M(["t", "u"], tps("t-0", "t-1", "u-0"), 3)}
    topics = {"t": 3, "u": 1}
    assert O.optimal_sticky(members, topics)[:2] == (2, 8)
    good = {"a": tps("t-1", "t-2"), "b": tps("t-0", "u-0")}
    assert O.check_optimal_stickiness(members, topics, good) == (2, 2)
    needless = {"a": tps("t-0", "t-1"), "b": tps("t-2", "u-0")}  # balanced but gives away both
    with pytest.raises(O.OracleViolation, match="stickiness not optimal: kept 1 != optimum 2"):
        O.check_optimal_stickiness(members, topics, needless)


# ---------------------------------------------------------------- cooperative


def test_cooperative_safety():
    prev = {"a": tps("t-0", "t-1"), "b": []}
    O.check_cooperative_safety(prev, {"a": tps("t-0"), "b": []})  # t-1 withheld: fine
    with pytest.raises(O.OracleViolation, match="t-1 revoked from a and added to b"):
        O.check_cooperative_safety(prev, {"a": tps("t-0"), "b": tps("t-1")})
    # A member that left revokes nothing: its partitions may move at once.
    O.check_cooperative_safety({"gone": tps("t-0")}, {"a": tps("t-0")})


def test_withholding_justified():
    members = {"a": M(["t"], tps("t-0", "t-1"), 1), "b": M(["t"])}
    # a is giving up t-1: withholding it is allowed (b gets it next round).
    assert O.check_withholding_justified(members, {"t": 2}, {"a": tps("t-0"), "b": []}) == {("t", 1)}


def test_withholding_unjustified_for_fresh_partition():
    members = {"a": M(["t"], tps("t-0"), 1), "b": M(["t"])}
    with pytest.raises(O.OracleViolation, match="t-1 withheld although nobody is revoking it"):
        O.check_withholding_justified(members, {"t": 2}, {"a": tps("t-0"), "b": []})


def _fake(table):
    """An 'assignor' answering from a table keyed by round (counts calls)."""
    calls = []

    def fn(members, topics):
        calls.append(members)
        return table[min(len(calls) - 1, len(table) - 1)]

    return fn, calls


def test_convergence_accepts_two_round_protocol():
    members = {"a": M(["t"], tps("t-0", "t-1"), 1), "b": M(["t"])}
    topics = {"t": 2}
    r1 = {"a": tps("t-0"), "b": []}
    r2 = {"a": tps("t-0"), "b": tps("t-1")}
    fn, calls = _fake([r2, r2])
    assert O.check_convergence(fn, members, topics, r1, 2) == 2
    assert [dict(m)["a"].generation for m in calls] == [2, 3]
    assert calls[0]["a"].owned_partitions == (("t", 0),)


def test_convergence_rejects_incomplete_round_2():
    members = {"a": M(["t"], tps("t-0", "t-1"), 1), "b": M(["t"])}
    r1 = {"a": tps("t-0"), "b": []}
    fn, _ = _fake([r1])
    with pytest.raises(O.OracleViolation, match="not complete after round 2"):
        O.check_convergence(fn, members, {"t": 2}, r1, 2)


def test_convergence_rejects_unsafe_round_2():
    members = {"a": M(["t"], tps("t-0", "t-1"), 1), "b": M(["t"])}
    r1 = {"a": tps("t-0", "t-1"), "b": []}
    fn, _ = _fake([{"a": tps("t-0"), "b": tps("t-1")}])
    # r1 is complete, so round 2 is the stability check: it moved t-1.
    with pytest.raises(O.OracleViolation, match="not stable"):
        O.check_convergence(fn, members, {"t": 2}, r1, 2)
    r1b = {"a": tps("t-0"), "b": []}
    fn2, _ = _fake([{"a": [], "b": tps("t-0", "t-1")}])
    with pytest.raises(O.OracleViolation, match="unsafe transfers"):
        O.check_convergence(fn2, members, {"t": 2}, r1b, 2)


def test_convergence_rejects_oscillation():
    members = {"a": M(["t"]), "b": M(["t"])}
    x = {"a": tps("t-0"), "b": tps("t-1")}
    y = {"a": tps("t-1"), "b": tps("t-0")}
    fn, _ = _fake([y])
    with pytest.raises(O.OracleViolation, match="not stable"):
        O.check_convergence(fn, members, {"t": 2}, x, 2)


# ---------------------------------------------------------------- determinism


def test_determinism_catches_order_dependence():
    members = {"a": M(["t"]), "b": M(["t"]), "c": M(["t"])}

    def first_listed_gets_all(ms, topics):
        first = next(iter(ms))
        return {m: (tps("t-0", "t-1") if m == first else []) for m in ms}

    def by_id(ms, topics):
        return {m: (tps("t-0", "t-1") if m == min(ms) else []) for m in ms}

    O.check_deterministic(by_id, members, {"t": 2}, random.Random(0), tries=5)
    with pytest.raises(O.OracleViolation, match="depends on input order"):
        O.check_deterministic(first_listed_gets_all, members, {"t": 2}, random.Random(0), tries=10)


def test_permuted_inputs_shuffle_owned_lists():
    members = {f"m{i}": M(["t", "u"], [("t", j) for j in range(8)], 1) for i in range(6)}
    pm, _ = O.permuted_inputs(members, {"t": 8, "u": 1}, random.Random(1))
    assert list(pm) != list(members)
    assert any(pm[m].owned_partitions != members[m].owned_partitions for m in members)
    assert all(set(pm[m].owned_partitions) == set(members[m].owned_partitions) for m in members)


# ---------------------------------------------------------------- racks, per-topic, failover


def test_rack_locality_counts():
    members = {"a": M(["t"], rack="r1"), "b": M(["t"], rack="r2"), "c": M(["t"])}
    racks = {("t", 0): ["r1"], ("t", 1): ["r1"], ("t", 2): ["r2", "r3"]}
    r = {"a": tps("t-0"), "b": tps("t-1", "t-2"), "c": tps("t-3")}
    assert O.rack_locality(members, r, racks) == {"local": 2, "mismatch": 1, "unknown": 1}
    assert O.max_rack_locality_balanced(members, {"t": 4}, racks) == 3


def test_per_topic_balance():
    members = {"a": M(["t", "u"]), "b": M(["t", "u"])}
    O.check_per_topic_balance(members, {"t": 2, "u": 2}, {"a": tps("t-0", "u-0"), "b": tps("t-1", "u-1")})
    with pytest.raises(O.OracleViolation, match="topic t unevenly spread"):
        O.check_per_topic_balance(members, {"t": 2, "u": 2}, {"a": tps("t-0", "t-1"), "b": tps("u-0", "u-1")})


def test_failover_owner():
    members = {
        "a": M(["t"], user_data=(5).to_bytes(4, "big")),
        "b": M(["t"], user_data=(-1).to_bytes(4, "big", signed=True)),
        "c": M(["t"], user_data=b"\x00"),  # malformed: lowest
    }
    O.check_failover_owner(members, {"t": 2}, {"a": tps("t-0", "t-1"), "b": [], "c": []})
    with pytest.raises(O.OracleViolation, match="went to b"):
        O.check_failover_owner(members, {"t": 2}, {"a": [], "b": tps("t-0", "t-1"), "c": []})
    with pytest.raises(O.OracleViolation, match="split"):
        O.check_failover_owner(members, {"t": 2}, {"a": tps("t-0"), "b": tps("t-1"), "c": []})
    assert O.failover_priority(None) is None and O.failover_priority(b"\xff\xff\xff\xfe") == -2


# ---------------------------------------------------------------- oracles agree with each other


@st.composite
def small_groups(draw, uniform=False):
    n_topics = draw(st.integers(1, 4))
    topics = {f"t{i}": draw(st.integers(0, 6)) for i in range(n_topics)}
    n_members = draw(st.integers(1, 5))
    all_topics = sorted(topics)
    members = {}
    for i in range(n_members):
        subs = all_topics if uniform else draw(st.lists(st.sampled_from(all_topics), unique=True))
        owned = draw(st.lists(st.tuples(st.sampled_from(all_topics), st.integers(0, 7)), max_size=8))
        gen = draw(st.integers(-1, 3))
        members[f"m{i}"] = M(subs, owned, gen)
    return members, topics


@st.composite
def random_valid_assignment(draw, group):
    members, topics = group
    subs = O.effective_subscriptions(members, topics)
    result = {m: [] for m in members}
    for t, p in sorted(O.expected_partitions(members, topics)):
        cands = sorted(m for m in members if t in subs[m])
        result[draw(st.sampled_from(cands))].append((t, p))
    return {m: sorted(v) for m, v in result.items()}


@pytest.mark.slow
@settings(max_examples=300)
@given(st.data())
def test_bfs_and_flow_balance_oracles_agree(data):
    group = data.draw(small_groups())
    result = data.draw(random_valid_assignment(group))
    members, topics = group
    no_path = O.find_cost_reducing_path(members, topics, result) is None
    _, best_sq, best_loads = O.optimal_sticky(members, topics)
    assert no_path == (O.sum_of_squares(result) == best_sq)
    if no_path:
        assert sorted(O.loads(result).values()) == sorted(best_loads.values())


@pytest.mark.slow
@settings(max_examples=300)
@given(small_groups(uniform=True))
def test_uniform_bound_equals_flow_optimum(group):
    members, topics = group
    resolved = O.resolve_ownership(members, topics)
    total = len(O.expected_partitions(members, topics))
    kept, sq, _ = O.optimal_sticky(members, topics, resolved)
    assert kept == O.uniform_kept_bound(resolved, total, len(members))
    q, r = divmod(total, len(members))
    assert sq == r * (q + 1) ** 2 + (len(members) - r) * q * q
