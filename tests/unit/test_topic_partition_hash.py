"""Every ``TopicPartition`` kassign returns behaves as the equal plain ``(topic, partition)`` tuple
in hashing: same ``hash()``, and each meets the other in a set and as a dict key.

kassign builds its ``TopicPartition`` results (a tuple subclass) in Rust. Since CPython 3.14 a
tuple caches its hash in the object (``ob_hash``, -1 for "not computed yet"), so an object built
outside CPython's tuple constructors must reset that cache or ``hash()`` returns a stale value
(CPython gh-131525). This module checks every public way a ``TopicPartition`` comes out of
kassign: ``assign`` with every strategy, ``assign_owners``, ``assign_lag_aware``, ``Member``'s
owned partitions, the decoders of ``kassign.protocol``, the wire path and the kafka-python drop-in
classes (aiokafka's: ``test_topic_partition_hash_aiokafka.py``). It runs on every interpreter of
the matrix (docs/interpreters.md).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

import kassign
import kassign.kafka_python as kp
from kassign import Member, TopicPartition, _core, protocol
from support.tuple_hash import Cluster, assert_hashes_as_tuples


def _group(rng: random.Random) -> tuple[dict[str, Member], dict[str, int], dict[tuple[str, int], int], Any]:
    """A random group whose members own some of the partitions (sticky history)."""
    topics = {f"topic-{i}": rng.randint(1, 40) for i in range(rng.randint(1, 4))}
    names = sorted(topics)
    members = {}
    for i in range(rng.randint(1, 6)):
        subscribed = rng.sample(names, rng.randint(1, len(names)))
        owned = [(t, rng.randrange(topics[t])) for t in subscribed for _ in range(rng.randint(0, 3))]
        members[f"member-{i}"] = Member(subscribed, owned, rng.choice([-1, 1, 2]), rng.choice([None, "r1", "r2"]))
    lags = {(t, p): rng.randrange(10_000) for t, n in topics.items() for p in range(n)}
    racks = None
    if rng.random() < 0.5:
        racks = {(t, p): rng.sample(["r1", "r2", "r3"], 2) for t, n in topics.items() for p in range(n)}
    return members, topics, lags, racks


@pytest.mark.parametrize("strategy", kassign.STRATEGIES)
def test_assign_results_hash_as_tuples(strategy: str) -> None:
    rng = random.Random(f"hash-{strategy}")
    checked = 0
    for _ in range(20):
        members, topics, lags, racks = _group(rng)
        kw: dict[str, Any] = {"lags": lags} if strategy == "lag-aware" else {}
        result = kassign.assign(strategy, members, topics, partition_racks=racks, **kw)
        for partitions in result.values():
            checked += assert_hashes_as_tuples(partitions)
        owners = kassign.assign_owners(strategy, members, topics, partition_racks=racks, **kw)
        for partitions in owners.to_dict().values():
            assert_hashes_as_tuples(partitions)
    assert checked > 0


def test_a_large_result_is_keyed_as_tuples() -> None:
    # One member's result as big as a consumer's: every partition found in a dict of plain tuples.
    result = kassign.assign("range", {"c1": Member(["orders"]), "c2": Member(["orders"])}, {"orders": 20_000})
    by_tuple = {("orders", p): p for p in range(20_000)}
    assert [by_tuple[tp] for tp in result["c1"]] == list(range(10_000))
    assert len(set(result["c1"]) | set(by_tuple)) == 20_000


def test_lag_aware_report_hashes_as_tuples() -> None:
    rng = random.Random("hash-lag-aware-report")
    checked = 0
    for mode in ("proposal", "per-topic", "global"):
        members, topics, lags, _ = _group(rng)
        report = kassign.assign_lag_aware(members, topics, lags=lags, mode=mode, sticky=False)
        for partitions in report.assignment.values():
            checked += assert_hashes_as_tuples(partitions)
    assert checked > 0


def test_member_owned_partitions_hash_as_tuples() -> None:
    member = Member(["a", "b"], [("a", 3), ("b", 0), ("a", 1), ("a", 300)], 2)
    assert assert_hashes_as_tuples(member.owned_partitions) == 4
    groups = Member(["a"], [("a", p) for p in range(1000)]).owned_partitions
    assert assert_hashes_as_tuples(groups) == 1000


def test_decoders_hash_as_tuples() -> None:
    owned = [("a", 0), ("b", 7), ("a", 2), ("c", 100_000)]
    for version in range(1, 4):
        sub = protocol.decode_subscription(protocol.encode_subscription(["a", "b"], None, owned, 3, "r1", version))
        assert assert_hashes_as_tuples(sub.owned_partitions) == 4
        assignment = protocol.decode_assignment(protocol.encode_assignment(owned, b"x", version))
        assert assert_hashes_as_tuples(assignment.partitions) == 4
    partitions, generation = protocol.decode_sticky_user_data(protocol.encode_sticky_user_data(owned, 5))
    assert generation == 5
    assert assert_hashes_as_tuples(partitions) == 4


def test_wire_path_hashes_as_tuples() -> None:
    rng = random.Random("hash-wire")
    owned = 0
    for strategy in kassign.STRATEGIES:
        members, topics, lags, _ = _group(rng)
        subscriptions = {
            mid: protocol.encode_subscription(
                m.topics, None, list(m.owned_partitions), m.generation, m.rack, protocol.MAX_VERSION
            )
            for mid, m in members.items()
        }
        kw: dict[str, Any] = {"lags": lags} if strategy == "lag-aware" else {}
        out = kassign.protocol.assign_wire(strategy, subscriptions, topics, **kw)
        checked = sum(assert_hashes_as_tuples(protocol.decode_assignment(raw).partitions) for raw in out.values())
        assert checked == sum(topics[t] for t in {t for m in members.values() for t in m.topics}), strategy
        # The leader's members decoded from the bytes (kassign._core, what assign_wire reads),
        # with the history the strategy reads.
        decoded, _ = _core.members_from_wire(strategy, subscriptions, None)
        for m in decoded.values():
            owned += assert_hashes_as_tuples(m.owned_partitions)
    assert owned > 0


@pytest.mark.parametrize(
    "name", ["RangeAssignor", "RoundRobinAssignor", "StickyAssignor", "CooperativeStickyAssignor", "FairAssignor"]
)
def test_kafka_python_drop_in_hashes_as_tuples(name: str) -> None:
    topics = {"orders": 12, "payments": 5}
    leader = getattr(kp, name)()
    raws = [leader.metadata(["orders", "payments"]) for _ in range(3)]
    member = JoinGroupResponse.JoinGroupResponseMember
    members = [
        member(member_id=f"m{i}", group_instance_id=None, metadata=ConsumerProtocolSubscription.decode(raw))
        for i, raw in enumerate(raws)
    ]
    sent = leader.assign(Cluster(topics), members)
    received = {mid: protocol.decode_assignment(raw).partitions for mid, raw in sent.items()}
    assert sum(assert_hashes_as_tuples(p) for p in received.values()) == 17
    # The member side: what the class remembers of the assignment it received.
    leader.on_assignment(received["m0"], 4)
    assert assert_hashes_as_tuples(leader.owned_partitions) == len(received["m0"]) > 0
    # The drop-in's read of the client's members (kassign._core, what assign reads).
    history = kp.CooperativeStickyAssignor()
    history.on_assignment([TopicPartition("orders", p) for p in range(4)], 3)
    decoded = _core.drop_in_members(
        history.name,
        "kafka-python",
        [
            member(
                member_id="h",
                group_instance_id=None,
                metadata=ConsumerProtocolSubscription.decode(history.metadata(["orders"])),
            )
        ],
        lambda _: None,
    )
    assert assert_hashes_as_tuples(decoded["h"].owned_partitions) == 4
