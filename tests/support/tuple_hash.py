"""Checks shared by tests/unit/test_topic_partition_hash*.py: kassign's ``TopicPartition``\\ s
against plain tuples, and the cluster metadata the drop-in classes read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def assert_hashes_as_tuples(partitions: Iterable[Any]) -> int:
    """Each of ``partitions`` hashes as the equal plain tuple and meets it in a set and a dict;
    returns how many were checked (callers assert it is not zero)."""
    got = list(partitions)
    plain = [(tp[0], tp[1]) for tp in got]
    for tp, t in zip(got, plain):
        assert type(t) is tuple and tp == t
        assert hash(tp) == hash(t), (tp, hash(tp), hash(t))
        assert t in {tp} and tp in {t}
        assert {tp: 1}.get(t) == 1 and {t: 1}.get(tp) == 1
    assert set(got) == set(plain)
    assert {tp: i for i, tp in enumerate(got)} == {t: i for i, t in enumerate(plain)}
    return len(got)


class Broker:
    rack = None


class Cluster:
    """The part of kafka-python's ClusterMetadata the drop-in classes read."""

    def __init__(self, topics: dict[str, int]) -> None:
        self.topics = topics

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(range(self.topics[topic])) if topic in self.topics else None

    def broker_metadata(self, node: int) -> Broker:
        return Broker()
