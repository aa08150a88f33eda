"""Public value types: :class:`TopicPartition` and :class:`Member`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional


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


@dataclass(frozen=True, slots=True)
class Member:
    """One consumer group member as the assignor sees it.

    Arguments:
        topics: topics the member subscribes to (any iterable of str; stored sorted, deduplicated).
        owned_partitions: partitions the member owned in the previous generation (history for the
            sticky strategies); pairs or ``TopicPartition``.
        generation: the generation those partitions were owned in (-1 = unknown).
        rack: the member's ``client.rack`` (None or "" = no rack).
        group_instance_id: static membership id (``group.instance.id``), or None.
        user_data: the member's opaque user data bytes (failover reads its priority here).
    """

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int = -1
    rack: Optional[str] = None
    group_instance_id: Optional[str] = None
    user_data: Optional[bytes] = field(default=None, repr=False)

    def __init__(
        self,
        topics: Iterable[str],
        owned_partitions: Iterable[Any] = (),
        generation: int = -1,
        rack: Optional[str] = None,
        group_instance_id: Optional[str] = None,
        user_data: Optional[bytes] = None,
    ) -> None:
        topics_t = tuple(sorted(set(_as_str_tuple(topics, "Member.topics"))))
        if isinstance(owned_partitions, (str, bytes)):
            raise TypeError("Member.owned_partitions: expected an iterable of (topic, partition) pairs")
        try:
            owned_iter = list(owned_partitions)
        except TypeError:
            raise TypeError(
                f"Member.owned_partitions: expected an iterable of (topic, partition) pairs, "
                f"got {type(owned_partitions).__name__}"
            ) from None
        owned = tuple(_as_topic_partition(tp, "Member.owned_partitions") for tp in owned_iter)
        if not isinstance(generation, int) or isinstance(generation, bool):
            raise TypeError(f"Member.generation: expected an int, got {type(generation).__name__}")
        if not INT32_MIN <= generation <= INT32_MAX:
            raise ValueError(f"Member.generation: {generation} does not fit in a signed 32-bit int")
        if rack is not None and not isinstance(rack, str):
            raise TypeError(f"Member.rack: expected a str or None, got {type(rack).__name__}")
        if group_instance_id is not None and not isinstance(group_instance_id, str):
            raise TypeError(
                f"Member.group_instance_id: expected a str or None, got {type(group_instance_id).__name__}"
            )
        if user_data is not None:
            if isinstance(user_data, (bytearray, memoryview)):
                user_data = bytes(user_data)
            elif not isinstance(user_data, bytes):
                raise TypeError(f"Member.user_data: expected bytes or None, got {type(user_data).__name__}")
        object.__setattr__(self, "topics", topics_t)
        object.__setattr__(self, "owned_partitions", owned)
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "rack", rack)
        object.__setattr__(self, "group_instance_id", group_instance_id)
        object.__setattr__(self, "user_data", user_data)
