"""The aiokafka drop-in classes' ``TopicPartition``\\ s hash as the equal plain tuples (as
``test_topic_partition_hash.py`` checks for the rest of kassign's API; a module of its own because
aiokafka has no wheel for every interpreter of the matrix, docs/interpreters.md)."""

from __future__ import annotations

import pytest
from aiokafka.coordinator.protocol import ConsumerProtocol

import kassign.aiokafka as kaio
from kassign import TopicPartition, _core, protocol
from support.tuple_hash import Cluster, assert_hashes_as_tuples


@pytest.mark.parametrize(
    "name", ["RangeAssignor", "RoundRobinAssignor", "StickyAssignor", "CooperativeStickyAssignor", "FairAssignor"]
)
def test_aiokafka_drop_in_hashes_as_tuples(name: str) -> None:
    topics = {"orders": 12, "payments": 5}
    leader = getattr(kaio, name)()
    members = {f"m{i}": ConsumerProtocol.METADATA.decode(leader.metadata(["orders", "payments"])) for i in range(3)}
    sent = leader.assign(Cluster(topics), members)
    received = {mid: protocol.decode_assignment(raw).partitions for mid, raw in sent.items()}
    assert sum(assert_hashes_as_tuples(p) for p in received.values()) == 17
    leader.on_assignment(received["m0"])
    assert assert_hashes_as_tuples(leader.state().owned) == len(received["m0"]) > 0
    # The drop-in's read of aiokafka's members (kassign._core, what assign reads): the owned list
    # aiokafka's members carry in their user data.
    history = kaio.StickyAssignor()
    history.on_assignment([TopicPartition("orders", p) for p in range(4)])
    decoded = _core.drop_in_members(
        history.name, "aiokafka", {"h": ConsumerProtocol.METADATA.decode(history.metadata(["orders"]))}, lambda _: None
    )
    assert assert_hashes_as_tuples(decoded["h"].owned_partitions) == 4
