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
from ._core import EncodeError, InputError, InternalError, KassignError, ProtocolError
from ._inputs import CheckedInputs, check_inputs, check_members
from ._types import Member, Owners, TopicPartition
from .assignors import PYTHON_STRATEGIES

__version__: str = _core.__version__

#: Largest total partition count accepted (the Rust core's MAX_PARTITIONS, rust/core/src/model.rs).
_MAX_PARTITIONS: int = _core.MAX_PARTITIONS

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
    "EncodeError",
    "InputError",
    "InternalError",
    "KassignError",
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
) -> CheckedInputs:
    """The checks of the inputs every entry point shares, run once (:func:`kassign._inputs.check_inputs`):
    the replica racks, the lags and the strategy's options. Returns (racks as the core reads them,
    lags, the strategy's checked options)."""
    return check_inputs(caller, strategy, python_impl is not None, partition_racks, lags, options)


def _run(
    python_impl: Any,
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    racks: list[tuple[str, int, list[str]]],
    checked_lags: dict[tuple[str, int], int] | None,
    options: Any,
) -> dict[str, list[TopicPartition]]:
    """Run a dispatched strategy on checked inputs (:func:`_implementation`, :func:`_check_inputs`;
    ``options``: the strategy's checked options)."""
    # The cyclic GC is paused while the result is built. Result TopicPartitions are made in Rust and
    # untracked by the GC (rust/python/src/objects.rs), but the Python strategies' intermediate
    # containers for ~1M partitions would still trigger full collections over the whole heap that
    # hold the GIL for 60-600 ms each, stalling the consumer's heartbeat thread (RELIABILITY.md,
    # GIL). Nothing made here holds a cycle.
    gc_was_enabled = gc.isenabled()
    if gc_was_enabled:
        gc.disable()
    try:
        if python_impl is not None:
            checked_members = check_members(members)
            partitions = _core.check_partitions(partitions_per_topic)
            result: dict[str, list[TopicPartition]] = python_impl(
                checked_members, partitions, lags=checked_lags, partition_racks=racks, options=options
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
    checked = _check_inputs("assign", strategy, python_impl, partition_racks, lags, options)
    return _run(python_impl, strategy, members, partitions_per_topic, checked.racks, checked.lags, checked.options)


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
    owner arrays come straight from the strategy, so no Python object is made per partition: at a
    million partitions that is most of what :func:`assign` costs.
    """
    python_impl = _implementation(strategy)
    racks, checked_lags, checked_options = _check_inputs(
        "assign_owners", strategy, python_impl, partition_racks, lags, options
    )
    if python_impl is not None:
        return _python_owners(strategy, members, partitions_per_topic, checked_lags, checked_options)
    ids_list, raw = _core.assign_owners(strategy, members, partitions_per_topic, racks or None)
    owners: dict[str, array[int]] = {}
    for topic, data in raw.items():
        a = array("i")
        a.frombytes(data)
        owners[topic] = a
    return Owners(tuple(ids_list), owners)


def _python_owners(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    checked_lags: dict[tuple[str, int], int] | None,
    checked_options: Any,
) -> Owners:
    """:func:`assign_owners` for a Python strategy: its owner arrays (indices into the sorted
    member ids) renumbered to positions in ``members`` by the core, no object per partition."""
    from .assignors import PYTHON_OWNERS
    from .assignors._greedy import Inputs

    checked_members = check_members(members)
    partitions = _core.check_partitions(partitions_per_topic)
    owners_of, _ = PYTHON_OWNERS[strategy]
    inputs = Inputs(checked_members, partitions, checked_lags)
    placed = owners_of(inputs, checked_options)
    ids = tuple(checked_members)
    rank = {m: k for k, m in enumerate(ids)}
    topics = list(placed)
    renumbered = dict(zip(topics, _core.owner_positions([placed[t] for t in topics], [rank[m] for m in inputs.ids])))
    arrays = {t: renumbered[t] if t in renumbered else array("i", [-1]) * n for t, n in partitions.items()}
    return Owners(ids, arrays)


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

    checked_members = check_members(members)
    partitions = _core.check_partitions(partitions_per_topic)
    gc_was_enabled = gc.isenabled()
    if gc_was_enabled:
        gc.disable()
    try:
        return lag_aware.solve(checked_members, partitions, lags=lags, **options)
    finally:
        if gc_was_enabled:
            gc.enable()
