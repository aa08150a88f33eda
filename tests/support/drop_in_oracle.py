"""The drop-in classes' leader step as it was before it moved into the Rust core: the oracle
``test_drop_in_equivalence.py`` compares the shipped adapters with. Not shipped in the package.

Copied from ``python/kassign/_adapter_common.py``, ``kafka_python.py`` and ``aiokafka.py`` as of
the commit before the change (the Python copy of the wire-history rule, ``member_from_wire``, and
the per-member ``kassign.Member`` path), unchanged but for the functions' home: :func:`kafka_python_assign`
and :func:`aiokafka_assign` take the assignor whose ``assign`` they stand for, and return what
that ``assign`` returned (the clients' assignment structs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import kassign
from kassign import protocol
from kassign._adapter_common import HISTORY, OPTIONAL_HISTORY, log, partition_racks, partitions_per_topic
from kassign._types import Member, TopicPartition

ASSIGNMENT_VERSION = 3


def _has_partitions(owned: Any) -> bool:
    """Whether owned partitions, as pairs or grouped (topic, [partitions]), name any partition."""
    for entry in owned:
        parts = entry[1] if isinstance(entry, tuple) and len(entry) == 2 else None
        if parts is None or isinstance(parts, int) or len(parts):
            return True
    return False


def _coop_history(user_data: bytes | None, owned: Any, generation: int, member_id: str) -> tuple[Any, int]:
    # Java: a v2+ generation >= 0 wins; otherwise the user data's int32 (undecodable -> -1).
    if generation < 0 and user_data is not None:
        try:
            generation = protocol.decode_generation(user_data)
        except (kassign.ProtocolError, TypeError) as exc:
            log.warning("member %s: undecodable cooperative-sticky user data (%s); generation -1", member_id, exc)
            generation = -1
    if not _has_partitions(owned) and user_data is not None and len(user_data) > 4:
        # kassign's aiokafka members append their owned list (the leader may not see the v1 fields).
        try:
            embedded, _ = protocol.decode_sticky_user_data(user_data[4:])
            owned = embedded
        except (kassign.ProtocolError, TypeError):
            pass
    return owned, generation


def _sticky_history(user_data: bytes | None, owned: Any, generation: int, member_id: str) -> tuple[Any, int]:
    # Java's StickyAssignor: user data wins; null/empty -> the subscription's fields; undecodable
    # -> no history.
    if not user_data:
        return owned, generation
    try:
        parts, gen = protocol.decode_sticky_user_data(user_data)
    except (kassign.ProtocolError, TypeError) as exc:
        log.warning("member %s: undecodable sticky user data (%s); treated as having no history", member_id, exc)
        return (), -1
    return parts, (gen if gen is not None else -1)


def member_from_wire(
    strategy: str,
    member_id: str,
    topics: Any,
    user_data: Any = None,
    owned_partitions: Any = (),
    generation: Any = -1,
    rack: Any = None,
    group_instance_id: Any = None,
) -> Member:
    """Build the leader's view of one member from its (already split) subscription fields.

    ``owned_partitions`` are (topic, partition) pairs or grouped as (topic, [partition, ...]), the
    way the wire carries them (passed to :class:`kassign.Member` as they are).

    Never raises: anything malformed is logged and dropped (the member keeps its subscription and
    gets no history; an unreadable subscription gives an empty one, so the member still gets an
    entry - with nothing - in the assignment).
    """
    try:
        topic_list = [t for t in (topics or ()) if isinstance(t, str)]
    except TypeError:
        log.warning("member %s: unreadable topic list %r; treated as subscribing to nothing", member_id, topics)
        topic_list = []
    if isinstance(user_data, (bytearray, memoryview)):
        user_data = bytes(user_data)
    if user_data is not None and not isinstance(user_data, bytes):
        user_data = None
    rack = rack if isinstance(rack, str) and rack else None
    instance = group_instance_id if isinstance(group_instance_id, str) and group_instance_id else None
    owned: Any = owned_partitions or ()
    if not isinstance(generation, int) or isinstance(generation, bool):
        generation = -1
    kind = HISTORY.get(strategy) or OPTIONAL_HISTORY.get(strategy)
    try:
        if kind == "coop":
            owned, generation = _coop_history(user_data, owned, generation, member_id)
        elif kind == "sticky":
            owned, generation = _sticky_history(user_data, owned, generation, member_id)
        else:
            owned, generation = (), -1
    except TypeError:
        log.warning("member %s: unreadable owned partitions; treated as having no history", member_id)
        owned, generation = (), -1
    try:
        return Member(topic_list, owned, generation if generation >= 0 else -1, rack, instance, user_data)
    except (TypeError, ValueError) as exc:
        log.warning("member %s: invalid history (%s); treated as having no history", member_id, exc)
        return Member(topic_list, (), -1, rack, instance, user_data)


def member_from_subscription_bytes(
    strategy: str, member_id: str, data: Any, group_instance_id: str | None = None
) -> Member:
    """Decode raw subscription bytes with :mod:`kassign.protocol`; undecodable -> no topics, logged."""
    try:
        sub = protocol.decode_subscription(data)
    except (kassign.ProtocolError, TypeError) as exc:
        log.warning("member %s: undecodable subscription (%s); it gets no partitions", member_id, exc)
        return Member([], group_instance_id=group_instance_id)
    return member_from_wire(
        strategy,
        member_id,
        sub.topics,
        sub.user_data,
        sub.owned_partitions,
        sub.generation,
        sub.rack,
        group_instance_id,
    )


def run_assignment(
    strategy: str,
    members: dict[str, Member],
    cluster: Any,
    options: Mapping[str, Any],
) -> dict[str, list[TopicPartition]]:
    """kassign.assign over the decoded members and the client's metadata (racks when relevant)."""
    topics = {t for m in members.values() for t in m.topics}
    counts = partitions_per_topic(cluster, topics)
    racks = partition_racks(cluster, counts) if any(m.rack for m in members.values()) else None
    result = kassign.assign(strategy, members, counts, partition_racks=racks, **dict(options))
    for member_id in members:
        result.setdefault(member_id, [])
    return result


def group_by_topic(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    """[(topic, [partition, ...]), ...] from partitions sorted by (topic, partition), as
    :func:`kassign.assign` returns them: the shape the clients' assignment structs take."""
    out: list[tuple[str, list[int]]] = []
    last = None
    for topic, partition in partitions:
        if topic != last:
            out.append((topic, []))
            last = topic
        out[-1][1].append(partition)
    return out


class _KafkaPythonOld:
    """The kafka-python class's leader methods, bound to an assignor's ``name``/``strategy``/``options``."""

    def __init__(self, assignor: Any) -> None:
        self.name = assignor.name
        self.strategy = assignor.strategy
        self.options = assignor.options

    def _member(self, member: Any) -> kassign.Member:
        md = getattr(member, "metadata", None)
        member_id = getattr(member, "member_id", "?")
        owned = []
        for entry in getattr(md, "owned_partitions", None) or ():
            try:
                owned.append((entry.topic, entry.partitions))
            except AttributeError:
                log.warning("member %s: unreadable owned partitions entry %r", member_id, entry)
        return member_from_wire(
            self.name,
            member_id,
            getattr(md, "topics", None),
            getattr(md, "user_data", None),
            owned,
            getattr(md, "generation_id", -1),
            getattr(md, "rack_id", None),
            getattr(member, "group_instance_id", None),
        )

    def assign(self, cluster: Any, members: Any) -> dict[str, Any]:
        """Leader: decode every member and assign with kassign.

        Arguments:
            cluster: kafka-python ``ClusterMetadata``.
            members: ``JoinGroupResponseMember`` list (``member_id``, ``group_instance_id``,
                decoded ``metadata``).
        Returns:
            {member_id: ConsumerProtocolAssignment} (v3, null user data, as Java's built-ins).
        """
        decoded: dict[str, kassign.Member] = {}
        for member in members:
            decoded[member.member_id] = self._member(member)
        result = run_assignment(self.strategy, decoded, cluster, self.options)
        return {
            member_id: _kp_assignment()(
                version=ASSIGNMENT_VERSION, assigned_partitions=group_by_topic(parts), user_data=None
            )
            for member_id, parts in result.items()
        }


def _kp_assignment() -> Any:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    return ConsumerProtocolAssignment


def kafka_python_assign(assignor: Any, cluster: Any, members: Any) -> dict[str, Any]:
    """What ``kassign.kafka_python``'s ``assignor.assign(cluster, members)`` returned."""
    return _KafkaPythonOld(assignor).assign(cluster, members)


class _AiokafkaOld:
    """The aiokafka class's leader method, bound to an assignor (class or instance)."""

    def __init__(self, assignor: Any) -> None:
        self.name = assignor.name
        self.strategy = assignor.strategy
        self.options = assignor.options
        self._compute_strategy = assignor._compute_strategy
        self._check_available = assignor._check_available

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:
        """Leader: decode every member (v0 as aiokafka gives them) and assign with kassign.

        Returns:
            {member_id: ConsumerProtocolMemberAssignment} (v3, null user data).
        """
        decoded = {
            member_id: member_from_wire(
                self.name, member_id, getattr(md, "subscription", None), getattr(md, "user_data", None)
            )
            for member_id, md in members.items()
        }
        result = run_assignment(self._compute_strategy or self.strategy, decoded, cluster, self.options)
        return {
            member_id: _aio_assignment()(ASSIGNMENT_VERSION, group_by_topic(parts), None)
            for member_id, parts in result.items()
        }


def _aio_assignment() -> Any:
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

    return ConsumerProtocolMemberAssignment


def aiokafka_assign(assignor: Any, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:
    """What ``kassign.aiokafka``'s ``assignor.assign(cluster, members)`` returned."""
    return _AiokafkaOld(assignor).assign(cluster, members)
