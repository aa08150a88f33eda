"""Public value types: :class:`TopicPartition`, :class:`Member` and :class:`Owners`."""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from . import _core


class TopicPartition(NamedTuple):
    """A topic partition. A plain tuple underneath: ``TopicPartition("t", 0) == ("t", 0)``."""

    topic: str
    partition: int


@dataclass(frozen=True)
class Owners:
    """An assignment as owner arrays, from :func:`kassign.assign_owners`.

    ``owners[topic][p]`` is the position in ``members`` of the member that owns partition ``p`` of
    ``topic``, or ``-1`` when nobody does. Every topic of ``partitions_per_topic`` is present, in
    the order given. This is the form the strategies compute: one ``array('i')`` per topic and no
    Python object per partition, so it is the fast way to read a large assignment.

    >>> import kassign
    >>> members = {"c1": kassign.Member(["t"]), "c2": kassign.Member(["t"])}
    >>> result = kassign.assign_owners("range", members, {"t": 3})
    >>> result.members, result.owners["t"].tolist()
    (('c1', 'c2'), [0, 0, 1])
    >>> result.partitions("c2")
    [TopicPartition(topic='t', partition=2)]
    """

    #: Member ids, in the order of the ``members`` mapping given.
    members: tuple[str, ...]
    #: Topic -> one owner position per partition (``array('i')``), ``-1`` for no owner.
    owners: Mapping[str, array[int]]

    def partitions(self, member_id: str) -> list[TopicPartition]:
        """The partitions of one member, sorted by (topic, partition), as :func:`kassign.assign`
        gives them. Raises ``KeyError`` for an unknown member id."""
        try:
            pos = self.members.index(member_id)
        except ValueError:
            raise KeyError(member_id) from None
        return [
            TopicPartition(topic, p)
            for topic in sorted(self.owners)
            for p, o in enumerate(self.owners[topic])
            if o == pos
        ]

    def to_dict(self) -> dict[str, list[TopicPartition]]:
        """The same assignment as :func:`kassign.assign` returns it: member id -> sorted partitions."""
        out: dict[str, list[TopicPartition]] = {m: [] for m in self.members}
        lists = list(out.values())
        for topic in sorted(self.owners):
            for p, o in enumerate(self.owners[topic]):
                if o >= 0:
                    lists[o].append(TopicPartition(topic, p))
        return out


def _as_topic_partition(value: Any, field_name: str) -> TopicPartition:
    if isinstance(value, TopicPartition):
        tp = value
    elif isinstance(value, tuple) and len(value) == 2:
        tp = TopicPartition(value[0], value[1])
    elif hasattr(value, "topic") and hasattr(value, "partition"):
        # kafka-python / aiokafka TopicPartition namedtuples and similar objects.
        tp = TopicPartition(value.topic, value.partition)
    else:
        raise TypeError(f"{field_name}: expected (topic, partition) pairs, got {value!r}")
    if not isinstance(tp.topic, str):
        raise TypeError(f"{field_name}: topic must be a str, got {type(tp.topic).__name__}")
    if not isinstance(tp.partition, int) or isinstance(tp.partition, bool):
        raise TypeError(f"{field_name}: partition must be an int, got {type(tp.partition).__name__}")
    if not -(2**63) <= tp.partition < 2**63:
        # Out-of-range indexes are legal (dropped) history, but not beyond what any wire format or
        # the core can carry.
        raise ValueError(f"{field_name}: partition index {tp.partition} of topic {tp.topic!r} is out of range")
    return tp


def _as_str_tuple(value: Any, field_name: str) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{field_name}: expected an iterable of topic names, not a single {type(value).__name__}")
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"{field_name}: expected an iterable of topic names, got {type(value).__name__}") from None
    for t in items:
        if not isinstance(t, str):
            raise TypeError(f"{field_name}: topic names must be str, got {t!r}")
    return items


INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

#: One consumer group member as the assignor sees it (implemented in Rust: the type checks every
#: field once, at construction, and stores it in the form the core reads). See ``kassign.Member``.
Member = _core.Member
