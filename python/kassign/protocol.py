"""Kafka consumer-protocol wire formats, encoded and decoded in Rust.

The bytes a consumer puts in JoinGroup (its *subscription*) and gets back from SyncGroup (its
*assignment*), plus the user data the built-in strategies carry inside them:

* :func:`encode_subscription` / :func:`decode_subscription`: ``ConsumerProtocolSubscription`` v0-v3.
* :func:`encode_assignment` / :func:`decode_assignment`: ``ConsumerProtocolAssignment`` v0-v3.
* :func:`encode_sticky_user_data` / :func:`decode_sticky_user_data`: the eager ``sticky``
  assignor's ``StickyAssignorUserData`` v0/v1.
* :func:`encode_generation` / :func:`decode_generation`: ``cooperative-sticky`` user data.
* :func:`encode_priority` / :func:`decode_priority`: ``failover`` user data.

>>> from kassign import protocol
>>> data = protocol.encode_subscription(["t"], owned_partitions=[("t", 1), ("t", 0)], generation=5)
>>> sub = protocol.decode_subscription(data)
>>> sub.topics, sub.owned_partitions, sub.generation
(('t',), (TopicPartition(topic='t', partition=0), TopicPartition(topic='t', partition=1)), 5)

Decoding rules (Java's ``ConsumerProtocol`` unless noted):

* Versions above 3 are read as v3 and trailing bytes are ignored, for every version; the
  decoded ``version`` is the number on the wire. A negative version is an error.
* Only a length of -1 means null; other negative lengths are an error (Java reads any negative
  length of a nullable field as null, but never writes one). Null in a non-nullable field (topics,
  topic names, partition arrays) is an error, as in Java.
* Strings must be valid UTF-8 (Java would substitute U+FFFD).
* A declared length larger than the rest of the input is an error raised before anything is
  allocated, so hostile metadata cannot exhaust memory.

Every decoding failure raises :class:`kassign.ProtocolError` (a ``ValueError``) naming the byte
offset and the field expected there. Decoders accept ``bytes``, ``bytearray`` and ``memoryview``;
anything else (a ``str`` included) is a ``TypeError`` naming the argument.

Encoding: the subscription writer sorts topics and owned partitions, as Java does; an assignment
keeps its partitions grouped by topic in order of first appearance. Writing an older version
drops the fields it lacks (owned partitions before v1, generation before v2, rack before v3).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import _core
from ._core import ProtocolError
from ._types import INT32_MAX, INT32_MIN, TopicPartition, _as_str_tuple, _as_topic_partition

__all__ = [
    "Assignment",
    "ProtocolError",
    "Subscription",
    "assign_wire",
    "decode_assignment",
    "decode_generation",
    "decode_priority",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_generation",
    "encode_priority",
    "encode_sticky_user_data",
    "encode_subscription",
]

BytesLike = bytes | bytearray | memoryview

#: The highest version of the subscription and assignment formats this module writes.
MAX_VERSION = 3


@dataclass(frozen=True, slots=True)
class Subscription:
    """A decoded ``ConsumerProtocolSubscription``.

    Attributes:
        version: the version on the wire (versions above 3 were read as v3).
        topics: subscribed topics, in the order sent.
        user_data: the assignor's opaque user data, or None.
        owned_partitions: partitions the member owns (v1+; empty before).
        generation: the generation they were owned in (v2+; -1 before). Java treats any negative
            value as "no generation".
        rack: the member's ``client.rack`` (v3+; None before). Java treats ``""`` like None.
    """

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: tuple[TopicPartition, ...]
    generation: int
    rack: str | None


@dataclass(frozen=True, slots=True)
class Assignment:
    """A decoded ``ConsumerProtocolAssignment``.

    Attributes:
        version: the version on the wire.
        partitions: the assigned partitions, in the order sent.
        user_data: the assignor's opaque user data, or None (Java's built-ins send None).
    """

    version: int
    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None


# ------------------------------------------------------------------------------------ validation


def _check_int32(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"{name}: {value} does not fit in a signed 32-bit int")
    return value


def _check_version(version: Any) -> int:
    if not isinstance(version, int) or isinstance(version, bool):
        raise TypeError(f"version: expected an int, got {type(version).__name__}")
    if not 0 <= version <= MAX_VERSION:
        raise ValueError(f"version: can only write versions 0..{MAX_VERSION}, got {version}")
    return version


def _check_partitions(partitions: Any, name: str) -> list[tuple[str, int]]:
    if isinstance(partitions, (str, bytes)):
        raise TypeError(f"{name}: expected an iterable of (topic, partition) pairs, got {type(partitions).__name__}")
    try:
        items = list(partitions)
    except TypeError:
        raise TypeError(
            f"{name}: expected an iterable of (topic, partition) pairs, got {type(partitions).__name__}"
        ) from None
    out = []
    for item in items:
        tp = _as_topic_partition(item, name)
        _check_int32(tp.partition, f"{name}: partition of {tp.topic!r}")
        out.append((tp.topic, tp.partition))
    return out


def _check_optional_bytes(value: Any, name: str) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name}: expected bytes, bytearray, memoryview or None, got {type(value).__name__}")


# ------------------------------------------------------------------------------ subscription


def encode_subscription(
    topics: Iterable[str],
    user_data: BytesLike | None = None,
    owned_partitions: Iterable[Any] = (),
    generation: int = -1,
    rack: str | None = None,
    version: int = MAX_VERSION,
) -> bytes:
    """Encode a ``ConsumerProtocolSubscription`` (Java writes v3).

    Arguments:
        topics: subscribed topic names (written sorted).
        user_data: the assignor's user data, or None.
        owned_partitions: (topic, partition) pairs the member owns (written sorted; v1+).
        generation: the generation they were owned in, -1 for none (v2+).
        rack: the member's ``client.rack``, or None (v3+).
        version: 0..3; fields newer than ``version`` are dropped.

    Raises:
        TypeError / ValueError: a malformed argument (named in the message), a string longer
            than 32767 UTF-8 bytes, or an unsupported version.
    """
    topic_list = list(_as_str_tuple(topics, "topics"))
    owned = _check_partitions(owned_partitions, "owned_partitions")
    _check_int32(generation, "generation")
    if rack is not None and not isinstance(rack, str):
        raise TypeError(f"rack: expected a str or None, got {type(rack).__name__}")
    return _core.encode_subscription(
        topic_list,
        _check_optional_bytes(user_data, "user_data"),
        owned,
        generation,
        rack,
        _check_version(version),
    )


def decode_subscription(data: BytesLike) -> Subscription:
    """Decode a ``ConsumerProtocolSubscription`` of any version >= 0.

    Raises:
        ProtocolError: the bytes are not a valid subscription.
        TypeError: ``data`` is not bytes-like.
    """
    return Subscription(*_core.decode_subscription(data))


# -------------------------------------------------------------------------------- assignment


def encode_assignment(
    partitions: Iterable[Any],
    user_data: BytesLike | None = None,
    version: int = MAX_VERSION,
) -> bytes:
    """Encode a ``ConsumerProtocolAssignment`` (every version 0..3 has the same body).

    Partitions are grouped by topic in order of first appearance and kept in the given order
    within a topic (Java does not sort them either).

    Raises:
        TypeError / ValueError: a malformed argument (named in the message) or version.
    """
    parts = _check_partitions(partitions, "partitions")
    return _core.encode_assignment(parts, _check_optional_bytes(user_data, "user_data"), _check_version(version))


def decode_assignment(data: BytesLike) -> Assignment:
    """Decode a ``ConsumerProtocolAssignment`` of any version >= 0.

    Raises:
        ProtocolError: the bytes are not a valid assignment.
        TypeError: ``data`` is not bytes-like.
    """
    return Assignment(*_core.decode_assignment(data))


# ------------------------------------------------------------------------------- user data


def encode_sticky_user_data(partitions: Iterable[Any], generation: int | None = None) -> bytes:
    """Encode the eager ``sticky`` assignor's user data: v1 with ``generation``, v0 when None.

    Partitions are written sorted by (topic, partition) (Java uses hash-map order; readers accept
    any order).
    """
    parts = _check_partitions(partitions, "partitions")
    if generation is not None:
        _check_int32(generation, "generation")
    return _core.encode_sticky_user_data(parts, generation)


def decode_sticky_user_data(data: BytesLike) -> tuple[list[TopicPartition], int | None]:
    """Decode ``sticky`` user data into (owned partitions, generation or None for v0).

    As in Java: v1 is tried first, then v0; trailing bytes are ignored; empty input means no
    history (``([], None)``). Java ignores user data it cannot decode (generation -1); here that
    case raises :class:`ProtocolError` so the caller can decide.
    """
    return _core.decode_sticky_user_data(data)


def encode_generation(generation: int) -> bytes:
    """Encode ``cooperative-sticky`` user data: the generation as a big-endian int32
    (-1, ``b"\\xff\\xff\\xff\\xff"``, before the first assignment)."""
    return _core.encode_int32_user_data(_check_int32(generation, "generation"))


def decode_generation(data: BytesLike) -> int:
    """Decode ``cooperative-sticky`` user data: the big-endian int32 in the first four bytes
    (trailing bytes are ignored, as Java's ``getInt`` does).

    Raises:
        ProtocolError: fewer than four bytes (Java then uses generation -1).
    """
    return _core.decode_generation(data)


def encode_priority(priority: int) -> bytes:
    """Encode ``failover`` user data: the priority as a big-endian signed int32."""
    return _core.encode_int32_user_data(_check_int32(priority, "priority"))


def decode_priority(data: BytesLike | None) -> int | None:
    """Decode ``failover`` user data: exactly four bytes, a big-endian int32; None (lowest
    priority) when ``data`` is None or has any other length, as the ``failover`` strategy reads it."""
    if data is None:
        return None
    return _core.decode_priority(data)


# --------------------------------------------------------------------------------- leader path

_log = logging.getLogger("kassign.protocol")


def assign_wire(
    strategy: str,
    subscriptions: Mapping[str, BytesLike],
    partitions_per_topic: Mapping[str, int],
    *,
    group_instance_ids: Mapping[str, str | None] | None = None,
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
    lags: Mapping[tuple[str, int], int] | None = None,
    **options: Any,
) -> dict[str, bytes]:
    """A group leader's whole job, bytes in and bytes out: decode every member's
    ``ConsumerProtocolSubscription``, assign with ``strategy``, encode every member's
    ``ConsumerProtocolAssignment``.

    For anyone holding raw JoinGroup metadata: a custom coordinator, a fleet snapshot, a tool.
    Each member's history is read as the drop-in classes read it (``sticky``'s
    ``StickyAssignorUserData``, ``cooperative-sticky``'s owned partitions and generation), and
    the assignments are what they send: v3, grouped by topic, sorted, null user data (as Java's
    built-in assignors). For the Rust strategies the whole path runs in Rust without the GIL.

    Arguments:
        strategy: one of :data:`kassign.STRATEGIES`.
        subscriptions: member id -> the member's subscription bytes (JoinGroup metadata).
        partitions_per_topic: topic -> number of partitions.
        group_instance_ids: member id -> ``group.instance.id`` (static members), optional.
        partition_racks: as for :func:`kassign.assign`.
        lags: as for :func:`kassign.assign`.
        **options: as for :func:`kassign.assign`.

    Returns:
        member id -> assignment bytes, every member present, in the order of ``subscriptions``.

    A member whose bytes cannot be decoded never fails the leader: it is logged and gets an empty
    assignment (undecodable user data: the member keeps its subscription and gets no history).

    Raises:
        TypeError / ValueError: invalid arguments, naming the field (as :func:`kassign.assign`).
    """
    import kassign

    python_impl = kassign._implementation(strategy)
    if python_impl is not None:
        members, warnings = _core.members_from_wire(strategy, subscriptions, group_instance_ids)
        for w in warnings:
            _log.warning("%s", w)
        checked = kassign._check_inputs("assign_wire", strategy, python_impl, partition_racks, lags, options)
        result = kassign._run(
            python_impl, strategy, members, partitions_per_topic, checked.racks, checked.lags, checked.options
        )
        return _core.encode_assignments(result)
    racks = kassign._check_inputs("assign_wire", strategy, python_impl, partition_racks, lags, options).racks
    out, warnings = _core.assign_wire(strategy, subscriptions, partitions_per_topic, group_instance_ids, racks or None)
    for w in warnings:
        _log.warning("%s", w)
    return out
