"""Public API behaviour: types, validation errors naming the field, CLI."""

import json
import random
import subprocess
import sys

import pytest

import kassign
from kassign import Member, TopicPartition


def test_topic_partition_is_a_tuple():
    assert TopicPartition("t", 0) == ("t", 0)
    assert hash(TopicPartition("t", 0)) == hash(("t", 0))


def test_member_normalises_iterables():
    m = Member({"b", "a"}, owned_partitions=[("a", 1)], generation=3)
    assert m.topics == ("a", "b")
    assert m.owned_partitions == (TopicPartition("a", 1),)
    assert isinstance(m.owned_partitions[0], TopicPartition)


def test_member_topics_are_interned_and_str_subclasses_kept():
    # Names parsed separately (e.g. from JSON) become one shared object per name, so that
    # kassign.assign compares equal subscriptions by identity.
    a = Member(json.loads('["orders", "payments"]'))
    b = Member(json.loads('["payments", "orders"]'))
    assert a.topics == b.topics == ("orders", "payments")
    assert all(x is y for x, y in zip(a.topics, b.topics))
    assert a.topics[0] is sys.intern("orders")

    class Name(str):
        pass

    m = Member([Name("t")])
    assert type(m.topics[0]) is Name
    # Equal subscriptions with distinct objects (a subclass is never interned) are still one
    # subscription: the group is treated as uniformly subscribed (same answer either way here).
    r = kassign.assign("sticky", {"a": m, "b": Member(["t"])}, {"t": 2})
    assert sorted(map(len, r.values())) == [1, 1]


def test_members_share_equal_subscriptions_and_owned_names():
    # Equal subscriptions become one tuple, and owned topic names the subscription's objects, so
    # that kassign.assign resolves both by identity.
    owned = [tuple(g) for g in json.loads('[["payments", [1]], ["orders", [0, 2]]]')]
    a = Member(json.loads('["orders", "payments"]'), owned)
    b = Member(json.loads('["payments", "orders"]'))
    assert a.topics is b.topics
    assert [t for t, _ in a.owned_groups] == ["payments", "orders"]
    assert all(t is sys.intern(t) for t, _ in a.owned_groups)
    # A different subscription, or one with a str subclass, gets its own tuple.
    assert Member(["orders"]).topics is not a.topics

    class Name(str):
        pass

    c = Member([Name("orders"), "payments"], [(Name("orders"), 1)])
    assert c.topics is not a.topics and c.topics == a.topics
    assert type(c.owned_groups[0][0]) is Name
    # Owned names as subclass objects (one per group, never interned) resolve by value.
    members = {"a": a, "c": c, "d": Member(["orders"], [(Name("orders"), p) for p in range(3)])}
    r = kassign.assign("sticky", members, {"orders": 3, "payments": 2})
    assert sorted(tp for tps in r.values() for tp in tps) == [
        ("orders", 0),
        ("orders", 1),
        ("orders", 2),
        ("payments", 0),
        ("payments", 1),
    ]


def test_subscriptions_differing_in_one_subclass_name_stay_distinct():
    # Subscriptions are compared name by name (str subclasses are never interned, so by value):
    # equal lengths and a shared first name must not make two subscriptions one.
    class Name(str):
        pass

    members = {"a": Member([Name("t"), Name("u")]), "b": Member([Name("t"), "v"]), "c": Member(["t", "u"])}
    r = kassign.assign("range", members, {"t": 3, "u": 2, "v": 2})
    got = {m: sorted(tuple(tp) for tp in tps) for m, tps in r.items()}
    assert got == {
        "a": [("t", 0), ("u", 0)],
        "b": [("t", 1), ("v", 0), ("v", 1)],
        "c": [("t", 2), ("u", 1)],
    }


class _Id(str):
    """A str subclass member id (kept as given: never interned, compared by value)."""


def _mapping_kinds(d):
    """The same members as a dict, a read-only mapping proxy, and a dict with str-subclass ids."""
    import types

    return {
        "dict": dict(d),
        "proxy": types.MappingProxyType(dict(d)),
        "subclass-ids": {_Id(k): v for k, v in d.items()},
    }


@pytest.mark.parametrize("kind", ["dict", "proxy", "subclass-ids"])
def test_result_is_a_new_dict_in_input_order_for_any_mapping(kind):
    from kassign import protocol

    ids = [f"m-{i:03d}" for i in (5, 1, 9, 3, 7, 0)]
    members = _mapping_kinds({i: Member(["t", "u"]) for i in ids})[kind]
    r = kassign.assign("sticky", members, {"t": 4, "u": 3})
    assert type(r) is dict and r is not members
    assert list(r) == ids
    assert all(type(k) is type(k0) for k, k0 in zip(r, members))
    # every value was replaced: lists of TopicPartition, together all 7 partitions once
    assert all(isinstance(v, list) and all(type(tp) is TopicPartition for tp in v) for v in r.values())
    assert sorted(tp for v in r.values() for tp in v) == [("t", p) for p in range(4)] + [("u", p) for p in range(3)]
    assert isinstance(members["m-005"], Member)  # the input is untouched

    subs = {i: protocol.encode_subscription(["t"], version=3) for i in ids}
    subs = _mapping_kinds(subs)[kind]
    w = protocol.assign_wire("range", subs, {"t": 6})
    assert type(w) is dict and w is not subs and list(w) == ids
    got = {m: protocol.decode_assignment(b).partitions for m, b in w.items()}
    assert sorted(tp for v in got.values() for tp in v) == [("t", p) for p in range(6)]
    assert all(isinstance(subs[i], bytes) for i in ids)


@pytest.mark.parametrize(
    "kwargs, exc, field",
    [
        ({"topics": "t"}, TypeError, "Member.topics"),
        ({"topics": [1]}, TypeError, "Member.topics"),
        ({"topics": ["t"], "owned_partitions": [("t", "0")]}, TypeError, "Member.owned_partitions"),
        ({"topics": ["t"], "generation": "1"}, TypeError, "Member.generation"),
        ({"topics": ["t"], "generation": 2**40}, ValueError, "Member.generation"),
        ({"topics": ["t"], "rack": 3}, TypeError, "Member.rack"),
        ({"topics": ["t"], "user_data": "abc"}, TypeError, "Member.user_data"),
        ({"topics": ["t"], "group_instance_id": 5}, TypeError, "Member.group_instance_id"),
    ],
)
def test_member_rejects_bad_fields(kwargs, exc, field):
    with pytest.raises(exc, match=field):
        Member(**kwargs)


def test_unknown_strategy_lists_available():
    with pytest.raises(ValueError, match="available: range, roundrobin"):
        kassign.assign("nope", {}, {})


@pytest.mark.parametrize(
    "members, partitions, exc, field",
    [
        ({"c": ["t"]}, {"t": 1}, TypeError, r"members\['c'\]"),
        ({1: Member(["t"])}, {"t": 1}, TypeError, "members"),
        ({"c": Member(["t"])}, {"t": -1}, ValueError, "partitions_per_topic"),
        ({"c": Member(["t"])}, {"t": "3"}, TypeError, "partitions_per_topic"),
        ({"c": Member(["t"])}, {"t": True}, TypeError, "partitions_per_topic"),
        ({"c": Member(["t"])}, [("t", 1)], TypeError, "partitions_per_topic"),
    ],
)
def test_assign_rejects_bad_input(members, partitions, exc, field):
    with pytest.raises(exc, match=field):
        kassign.assign("range", members, partitions)


def test_every_member_in_result_and_sorted():
    members = {"b": Member(["x", "y"]), "a": Member(["y"]), "idle": Member(["nothing"])}
    result = kassign.assign("roundrobin", members, {"x": 3, "y": 2, "unsubscribed": 4})
    assert list(result) == ["b", "a", "idle"]
    assert result["idle"] == []
    for tps in result.values():
        assert tps == sorted(tps)
    assigned = sorted(tp for tps in result.values() for tp in tps)
    assert assigned == [("x", 0), ("x", 1), ("x", 2), ("y", 0), ("y", 1)]


def test_panic_surfaces_as_exception():
    with pytest.raises(kassign.InternalError, match="deliberate panic"):
        kassign._core._trigger_panic()
    # The process is still alive and the core still works.
    assert kassign.assign("range", {"c": Member(["t"])}, {"t": 1}) == {"c": [("t", 0)]}


def _cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "kassign", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_cli_assign_bundled_example(tmp_path):
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "scenario.json"
    r = _cli("assign", "--strategy", "range", str(example))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    doc = json.loads(example.read_text())
    assert set(out) == set(doc["members"])
    assigned = [tuple(tp) for tps in out.values() for tp in tps]
    assert len(assigned) == len(set(assigned)) == sum(doc["topics"].values())


@pytest.mark.parametrize(
    "stdin, message",
    [
        ("{bad", "malformed JSON"),
        ("[]", "expected a JSON object"),
        ('{"topics": {"t": -1}, "members": {}}', "topics.t"),
        ('{"topics": {"t": 1}, "members": {"c": {"topics": "t"}}}', "members.c.topics"),
        ('{"topics": {"t": 1}, "members": {"c": {"topics": ["t"], "owned": [["t"]]}}}', "members.c.owned"),
        ('{"topics": {"t": 1}, "members": {"c": {"topics": ["t"], "user_data_hex": "zz"}}}', "user_data_hex"),
    ],
)
def test_cli_rejects_bad_input_cleanly(stdin, message):
    r = _cli("assign", "--strategy", "range", "-", stdin=stdin)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_unknown_strategy_exit_2():
    r = _cli("assign", "--strategy", "bogus", "-", stdin='{"topics": {}, "members": {}}')
    assert r.returncode == 2 and "unknown strategy" in r.stderr


def _random_group(rng):
    topics = {f"t{i}": rng.randint(0, 6) for i in rng.sample(range(5), rng.randint(1, 4))}
    members = {}
    for i in rng.sample(range(20), rng.randint(0, 6)):
        subscribed = rng.sample(sorted(topics) + ["gone"], rng.randint(1, len(topics)))
        owned = [(t, rng.randrange(-1, 8)) for t in subscribed for _ in range(rng.randint(0, 2))]
        members[f"m{i}"] = Member(subscribed, owned, rng.choice([-1, 1, 2]), rng.choice([None, "r1", "r2"]))
    racks = None
    if rng.random() < 0.3:
        racks = {(t, p): rng.sample(["r1", "r2"], rng.randint(0, 2)) for t, n in topics.items() for p in range(n)}
    lags = {(t, p): rng.randrange(1000) for t, n in topics.items() for p in range(n)}
    return members, topics, racks, lags


@pytest.mark.parametrize("strategy", kassign.STRATEGIES)
def test_assign_owners_is_assign_as_owner_arrays(strategy):
    rng = random.Random(f"owners-{strategy}")
    for _ in range(150):
        members, topics, racks, lags = _random_group(rng)
        kw = {"lags": lags} if strategy == "lag-aware" else {}
        expected = kassign.assign(strategy, members, topics, partition_racks=racks, **kw)
        got = kassign.assign_owners(strategy, members, topics, partition_racks=racks, **kw)
        assert got.members == tuple(members)
        assert list(got.owners) == list(topics)
        assert {t: len(a) for t, a in got.owners.items()} == topics
        assert all(a.typecode == "i" and all(-1 <= o < len(members) for o in a) for a in got.owners.values())
        assert got.to_dict() == expected
        for m in members:
            assert got.partitions(m) == expected[m]


def test_assign_owners_errors_are_assigns():
    good = {"c": Member(["t"])}
    cases = [
        ("nope", good, {"t": 1}, {}),
        (3, good, {"t": 1}, {}),
        ("range", good, {"t": -1}, {}),
        ("range", good, {"t": "1"}, {}),
        ("range", {"c": ["t"]}, {"t": 1}, {}),
        ("range", {1: Member(["t"])}, {"t": 1}, {}),
        ("range", good, {"t": 1}, {"mode": "x"}),
        ("sticky", good, {"t": 2**40}, {}),
        ("fair", good, {"t": -1}, {}),
        ("lag-aware", good, {"t": 1}, {"lags": {("t", 0): -1}}),
    ]
    for strategy, members, topics, kw in cases:
        with pytest.raises((TypeError, ValueError)) as expected:
            kassign.assign(strategy, members, topics, **kw)
        with pytest.raises(expected.type) as got:
            kassign.assign_owners(strategy, members, topics, **kw)
        assert str(got.value).replace("assign_owners", "assign") == str(expected.value), (strategy, topics, kw)


def test_owners_partitions_of_an_unknown_member_is_a_key_error():
    owners = kassign.assign_owners("range", {"c": Member(["t"])}, {"t": 2})
    assert owners.partitions("c") == [TopicPartition("t", 0), TopicPartition("t", 1)]
    with pytest.raises(KeyError):
        owners.partitions("d")
