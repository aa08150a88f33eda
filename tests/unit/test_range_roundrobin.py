"""Range and round-robin: the KIP-49 tables of docs/strategies/fair.md, Java's static-member order,
and validity/completeness oracles on random inputs."""

import random

from hypothesis import given
from hypothesis import strategies as st

import kassign
from kassign import Member


def _tp(s):
    t, p = s.split("-")
    return (t, int(p))


# KIP-49 example: T1=2, T2=1, T3=2, T4=1, T5=2; C1, C4 on T1..T5; C2, C3 on T1, T3, T5.
KIP49_TOPICS = {"T1": 2, "T2": 1, "T3": 2, "T4": 1, "T5": 2}
KIP49_MEMBERS = {
    "C1": Member(["T1", "T2", "T3", "T4", "T5"]),
    "C2": Member(["T1", "T3", "T5"]),
    "C3": Member(["T1", "T3", "T5"]),
    "C4": Member(["T1", "T2", "T3", "T4", "T5"]),
}


def test_kip49_range_table():
    r = kassign.assign("range", KIP49_MEMBERS, KIP49_TOPICS)
    assert r == {
        "C1": [_tp(x) for x in ["T1-0", "T2-0", "T3-0", "T4-0", "T5-0"]],
        "C2": [_tp(x) for x in ["T1-1", "T3-1", "T5-1"]],
        "C3": [],
        "C4": [],
    }


def test_kip49_roundrobin_table():
    r = kassign.assign("roundrobin", KIP49_MEMBERS, KIP49_TOPICS)
    assert r == {
        "C1": [_tp(x) for x in ["T1-0", "T3-0", "T5-0"]],
        "C2": [_tp(x) for x in ["T1-1", "T3-1", "T5-1"]],
        "C3": [],
        "C4": [_tp(x) for x in ["T2-0", "T4-0"]],
    }


def test_java_two_consumers_two_topics_six_partitions_roundrobin():
    members = {"c1": Member(["t1", "t2"]), "c2": Member(["t1", "t2"])}
    r = kassign.assign("roundrobin", members, {"t1": 3, "t2": 3})
    assert r == {"c1": [("t1", 0), ("t1", 2), ("t2", 1)], "c2": [("t1", 1), ("t2", 0), ("t2", 2)]}


def test_range_static_members_interleaved_get_their_share():
    # kafka-python drops m1 here (docs/adapters.md, known problems); Java orders static members by instance id first.
    members = {
        "m1": Member(["t"], group_instance_id="i-b"),
        "m2": Member(["t"]),
        "m3": Member(["t"], group_instance_id="i-a"),
    }
    r = kassign.assign("range", members, {"t": 6})
    # Member order: m3 (instance i-a), m1 (instance i-b), then the dynamic m2.
    assert r == {"m3": [("t", 0), ("t", 1)], "m1": [("t", 2), ("t", 3)], "m2": [("t", 4), ("t", 5)]}


def test_roundrobin_static_members_first():
    members = {"a": Member(["t"]), "z": Member(["t"], group_instance_id="static-1")}
    r = kassign.assign("roundrobin", members, {"t": 3})
    assert r["z"] == [("t", 0), ("t", 2)] and r["a"] == [("t", 1)]


def test_range_co_partitioning():
    members = {f"c{i}": Member(["a", "b"]) for i in range(3)}
    r = kassign.assign("range", members, {"a": 7, "b": 7})
    for tps in r.values():
        a = [p for t, p in tps if t == "a"]
        b = [p for t, p in tps if t == "b"]
        assert a == b


def test_roundrobin_unequal_subscriptions_docstring_example():
    members = {"C0": Member(["t0"]), "C1": Member(["t0", "t1"]), "C2": Member(["t0", "t1", "t2"])}
    r = kassign.assign("roundrobin", members, {"t0": 1, "t1": 2, "t2": 3})
    assert r == {"C0": [("t0", 0)], "C1": [("t1", 0)], "C2": [("t1", 1), ("t2", 0), ("t2", 1), ("t2", 2)]}


@st.composite
def groups(draw):
    n_topics = draw(st.integers(1, 6))
    topics = {f"t{i}": draw(st.integers(0, 12)) for i in range(n_topics)}
    names = sorted(topics) + ["ghost"]  # a subscribed topic without metadata
    n_members = draw(st.integers(1, 8))
    members = {}
    for i in range(n_members):
        subs = draw(st.lists(st.sampled_from(names), min_size=0, max_size=len(names), unique=True))
        static = draw(st.one_of(st.none(), st.text(alphabet="abc", min_size=1, max_size=3)))
        members[f"m{draw(st.integers(0, 10**6))}-{i}"] = Member(subs, group_instance_id=static)
    return members, topics


@given(groups(), st.sampled_from(["range", "roundrobin"]))
def test_validity_and_completeness(group, strategy):
    members, topics = group
    r = kassign.assign(strategy, members, topics)
    assert set(r) == set(members)
    seen = set()
    for mid, tps in r.items():
        for t, p in tps:
            assert t in members[mid].topics, "assigned to a non-subscriber"
            assert 0 <= p < topics[t]
            assert (t, p) not in seen, "assigned twice"
            seen.add((t, p))
    subscribed = {t for m in members.values() for t in m.topics if t in topics}
    assert seen == {(t, p) for t in subscribed for p in range(topics[t])}


@given(groups(), st.sampled_from(["range", "roundrobin"]), st.randoms())
def test_deterministic_under_input_permutation(group, strategy, rnd: random.Random):
    members, topics = group
    items = list(members.items())
    rnd.shuffle(items)
    titems = list(topics.items())
    rnd.shuffle(titems)
    a = kassign.assign(strategy, members, topics)
    b = kassign.assign(strategy, dict(items), dict(titems))
    assert {k: list(v) for k, v in a.items()} == {k: list(v) for k, v in b.items()}


@given(groups())
def test_range_uniform_per_topic_counts_differ_by_at_most_one(group):
    members, topics = group
    r = kassign.assign("range", members, topics)
    for t in topics:
        subs = [m for m in members if t in members[m].topics]
        if not subs:
            continue
        counts = [sum(1 for tp in r[m] if tp[0] == t) for m in subs]
        assert max(counts) - min(counts) <= 1


def test_range_rack_aware_prefers_local_replicas():
    # Replicas alternate between racks a and b; each member should read from its own rack.
    members = {"c0": Member(["t"], rack="b"), "c1": Member(["t"], rack="a")}
    racks = {("t", p): ["a" if p % 2 == 0 else "b"] for p in range(6)}
    r = kassign.assign("range", members, {"t": 6}, partition_racks=racks)
    assert r == {"c0": [("t", 1), ("t", 3), ("t", 5)], "c1": [("t", 0), ("t", 2), ("t", 4)]}
    for mid, tps in r.items():
        assert all(members[mid].rack in racks[tp] for tp in tps)


def test_range_rack_aware_keeps_quota_when_racks_are_unbalanced():
    # Every partition lives on rack a only; quotas still hold (2 and 2), the b member takes the rest.
    members = {"c0": Member(["t"], rack="a"), "c1": Member(["t"], rack="b")}
    racks = {("t", p): ["a"] if p < 3 else ["a", "b"] for p in range(4)}
    r = kassign.assign("range", members, {"t": 4}, partition_racks=racks)
    # Rack pass: c0 (a) takes t-0, t-1; c1 (b) can only match t-3. Plain pass: c1 takes t-2.
    assert r == {"c0": [("t", 0), ("t", 1)], "c1": [("t", 2), ("t", 3)]}
