"""Public value types: :class:`TopicPartition` and :class:`Member`."""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _core


class TopicPartition(NamedTuple):
    """A topic partition. A plain tuple underneath: ``TopicPartition("t", 0) == ("t", 0)``."""

    topic: str
    partition: int


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
