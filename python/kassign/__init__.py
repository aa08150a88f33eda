"""kassign: Kafka consumer partition assignors with a Rust core.

Examples:
    >>> import kassign
    >>> members = {"c1": kassign.Member(["t"]), "c2": kassign.Member(["t"])}
    >>> result = kassign.assign("range", members, {"t": 3})
    >>> result["c1"]
    [TopicPartition(topic='t', partition=0), TopicPartition(topic='t', partition=1)]
    >>> result["c2"]
    [TopicPartition(topic='t', partition=2)]
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

from . import _core
from ._core import InternalError, ProtocolError
from ._types import Member, Owners, TopicPartition
from .assignors import PYTHON_STRATEGIES

__version__: str = _core.__version__

#: Largest total partition count accepted (the Rust core's MAX_PARTITIONS, rust/src/model.rs).
_MAX_PARTITIONS: int = _core.MAX_PARTITIONS
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_CANONICAL_ORDER = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "lag-aware",
    "fair",
    "failover",
    "server-uniform",
    "server-range",
    "server-kassign",
)
_RUST_STRATEGIES = frozenset(_core.rust_strategies())
_AVAILABLE = _RUST_STRATEGIES | frozenset(PYTHON_STRATEGIES)

#: The strategies this build has, in canonical order.
STRATEGIES: tuple[str, ...] = tuple(s for s in _CANONICAL_ORDER if s in _AVAILABLE) + tuple(
    sorted(_AVAILABLE.difference(_CANONICAL_ORDER))
)

__all__ = [
    "STRATEGIES",
    "InternalError",
    "Member",
    "Owners",
    "ProtocolError",
    "TopicPartition",
    "assign",
    "assign_lag_aware",
    "assign_owners",
]


def _unknown_strategy(strategy: Any) -> Exception:
    if not isinstance(strategy, str):
        return TypeError(f"strategy: expected a str, got {type(strategy).__name__}")
    return ValueError(f"strategy: unknown strategy {strategy!r}; available: {', '.join(STRATEGIES)}")


def _check_members(members: Any) -> dict[str, Member]:
    """The members mapping as a dict, for the Python strategies (the Rust strategies read the
    mapping in the core)."""
    if not isinstance(members, Mapping):
        raise TypeError(f"members: expected a mapping of member id to Member, got {type(members).__name__}")
    out: dict[str, Member] = {}
    for member_id, member in members.items():
        if not isinstance(member_id, str):
            raise TypeError(f"members: member ids must be str, got {member_id!r}")
        if not isinstance(member, Member):
            raise TypeError(f"members[{member_id!r}]: expected a kassign.Member, got {type(member).__name__}")
        out[member_id] = member
    return out


def _check_partition_racks(partition_racks: Any) -> list[tuple[str, int, list[str]]]:
    if partition_racks is None:
        return []
    if not isinstance(partition_racks, Mapping):
        raise TypeError(
            f"partition_racks: expected a mapping of (topic, partition) to racks, got {type(partition_racks).__name__}"
        )
    out = []
    for key, racks in partition_racks.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)):
            raise TypeError(f"partition_racks: keys must be (topic, partition) pairs, got {key!r}")
        if isinstance(racks, (str, bytes)):
            raise TypeError(f"partition_racks[{key!r}]: expected an iterable of rack names, not a single str")
        rack_list = list(racks)
        for r in rack_list:
            if not isinstance(r, str):
                raise TypeError(f"partition_racks[{key!r}]: rack names must be str, got {r!r}")
        if not _INT64_MIN <= key[1] <= _INT64_MAX:
            raise ValueError(f"partition_racks: partition index {key[1]} of topic {key[0]!r} is out of range")
        out.append((key[0], key[1], rack_list))
    return out


#: The largest lag accepted: Kafka offsets are int64, so no real lag is larger. The strategies'
#: kernels sum lags exactly in 128 bits.
_MAX_LAG = 2**63 - 1


def _check_lags(lags: Any) -> dict[tuple[str, int], int] | None:
    if lags is None:
        return None
    if not isinstance(lags, Mapping):
        raise TypeError(f"lags: expected a mapping of (topic, partition) to lag, got {type(lags).__name__}")
    out: dict[tuple[str, int], int] = {}
    for key, lag in lags.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)):
            raise TypeError(f"lags: keys must be (topic, partition) pairs, got {key!r}")
        if not isinstance(lag, int) or isinstance(lag, bool):
            raise TypeError(f"lags[{key!r}]: expected an int, got {type(lag).__name__}")
        if lag < 0:
            raise ValueError(f"lags[{key!r}]: lag must be >= 0, got {lag}")
        if lag > _MAX_LAG:
            raise ValueError(f"lags[{key!r}]: lag must be <= 2**63 - 1 (Kafka offsets are int64), got {lag}")
        out[(key[0], key[1])] = lag
    return out


def _implementation(strategy: Any) -> Any:
    """The "Rust or Python strategy?" dispatch, written once for every entry point (``assign``,
    ``assign_owners``, ``kassign.protocol.assign_wire``): the Python strategy's function, or None
    when the Rust core computes ``strategy``. Raises for an unknown strategy."""
    python_impl = PYTHON_STRATEGIES.get(strategy) if isinstance(strategy, str) else None
    if python_impl is None and (not isinstance(strategy, str) or strategy not in _RUST_STRATEGIES):
        raise _unknown_strategy(strategy)
    return python_impl


def _check_inputs(
    caller: str, strategy: str, python_impl: Any, partition_racks: Any, lags: Any, options: dict[str, Any]
) -> tuple[list[tuple[str, int, list[str]]], dict[tuple[str, int], int] | None]:
    """The checks of the inputs every entry point shares, in one place and run once: the replica
    racks, the lags, and that a Rust strategy gets no options (a Python strategy checks its own).
    Returns (racks as the core reads them, lags)."""
    racks = _check_partition_racks(partition_racks)
    checked_lags = _check_lags(lags)
    if python_impl is None and options:
        raise TypeError(f"{caller}: strategy {strategy!r} takes no options, got {', '.join(sorted(options))}")
    return racks, checked_lags


def _run(
    python_impl: Any,
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    racks: list[tuple[str, int, list[str]]],
    checked_lags: dict[tuple[str, int], int] | None,
    options: dict[str, Any],
) -> dict[str, list[TopicPartition]]:
    """Run a dispatched strategy on checked inputs (:func:`_implementation`, :func:`_check_inputs`)."""
    # The cyclic GC is paused while the result is built. Result TopicPartitions are made in Rust and
    # untracked by the GC (rust/src/py/objects.rs), but the Python strategies' intermediate
    # containers for ~1M partitions would still trigger full collections over the whole heap that
    # hold the GIL for 60-600 ms each, stalling the consumer's heartbeat thread (RELIABILITY.md,
    # GIL). Nothing made here holds a cycle.
    gc_was_enabled = gc.isenabled()
    if gc_was_enabled:
        gc.disable()
    try:
        if python_impl is not None:
            checked_members = _check_members(members)
            partitions = _core.check_partitions(partitions_per_topic)
            result: dict[str, list[TopicPartition]] = python_impl(
                checked_members, partitions, lags=checked_lags, partition_racks=racks, **options
            )
            return result
        # Members are checked by their type; counts, the cap, duplicates by the core's model.
        return _core.assign(strategy, members, partitions_per_topic, racks or None, TopicPartition)
    finally:
        if gc_was_enabled:
            gc.enable()


def assign(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    *,
    lags: Mapping[tuple[str, int], int] | None = None,
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
    **options: Any,
) -> dict[str, list[TopicPartition]]:
    """Assign the partitions of ``partitions_per_topic`` to ``members`` with ``strategy``.

    Arguments:
        strategy: one of :data:`STRATEGIES`.
        members: member id -> :class:`Member` (subscription, history, rack, static id, user data).
        partitions_per_topic: topic -> number of partitions. Topics nobody subscribes to are
            ignored; subscribed topics missing here are treated as not existing (yet).
        lags: (topic, partition) -> lag, used by ``lag-aware`` (see :mod:`kassign.lag`): an int
            from 0 to 2**63 - 1 (Kafka offsets are int64).
        partition_racks: (topic, partition) -> racks of its replicas, for rack-aware strategies.
        **options: strategy-specific keyword options (e.g. ``mode``/``max_skew`` for lag-aware).

    Returns:
        member id -> partitions, every member present, each list sorted by (topic, partition).

    Raises:
        ValueError / TypeError: invalid input, naming the offending field.
    """
    python_impl = _implementation(strategy)
    racks, checked_lags = _check_inputs("assign", strategy, python_impl, partition_racks, lags, options)
    return _run(python_impl, strategy, members, partitions_per_topic, racks, checked_lags, options)


def assign_owners(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    *,
    lags: Mapping[tuple[str, int], int] | None = None,
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
    **options: Any,
) -> Owners:
    """:func:`assign`, with the result as owner arrays (:class:`Owners`) instead of one
    :class:`TopicPartition` per partition.

    Same arguments, checks and errors as :func:`assign`, and the same assignment:
    ``assign_owners(...).to_dict() == assign(...)``. For the strategies of the Rust core the
    owner arrays come straight from the core, so no Python object is made per partition: at a
    million partitions that is most of what :func:`assign` costs. The Python strategies
    (lag-aware, fair, failover) compute the usual result, converted.
    """
    python_impl = _implementation(strategy)
    racks, checked_lags = _check_inputs("assign_owners", strategy, python_impl, partition_racks, lags, options)
    if python_impl is not None:
        result = _run(python_impl, strategy, members, partitions_per_topic, racks, checked_lags, options)
        ids = tuple(result)
        position = {m: i for i, m in enumerate(ids)}
        arrays = {t: array("i", [-1]) * n for t, n in _core.check_partitions(partitions_per_topic).items()}
        for member_id, tps in result.items():
            for topic, p in tps:
                arrays[topic][p] = position[member_id]
        return Owners(ids, arrays)
    ids_list, raw = _core.assign_owners(strategy, members, partitions_per_topic, racks or None)
    owners: dict[str, array[int]] = {}
    for topic, data in raw.items():
        a = array("i")
        a.frombytes(data)
        owners[topic] = a
    return Owners(tuple(ids_list), owners)


def assign_lag_aware(
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    *,
    lags: Mapping[tuple[str, int], int] | None = None,
    **options: Any,
) -> Any:
    """The ``lag-aware`` strategy with a report: how far its busiest member is from the lower bound.

    Same arguments and options as ``assign("lag-aware", ...)``; returns a
    :class:`kassign.assignors.lag_aware.LagAwareResult` (``assignment``, ``max_member_lag``,
    ``lower_bound``, ``ratio``, ``greedy_max_member_lag``, ``improvement_moves``, ``kept``, ``mode``).
    """
    from .assignors import lag_aware

    checked_members = _check_members(members)
    partitions = _core.check_partitions(partitions_per_topic)
    checked_lags = _check_lags(lags)
    gc_was_enabled = gc.isenabled()
    if gc_was_enabled:
        gc.disable()
    try:
        return lag_aware.solve(checked_members, partitions, lags=checked_lags, **options)
    finally:
        if gc_was_enabled:
            gc.enable()
