"""Quality metrics of an assignment: the measures of the fleet report, for any assignment.

Pure functions over ``kassign.Member`` objects and assignments (``{member id: [TopicPartition]}``),
useful on their own, e.g. to measure :func:`kassign.assign` results in a test. Every metric is the
core's (``rust/core/src/fleet/metrics.rs``), the same code the fleet job measures with; this module
converts and forwards. Importing it does not import pyarrow or pyspark.

Definitions (docs/fleet.md, "Result columns"): a partition is *assignable* when its topic exists
and some member subscribes to it; *moves* and *kept* count previously owned, still assignable
partitions that changed owner / stayed; a *violation* is a partition given twice, to a
non-subscriber or out of range, a result entry of no member of the group, or a member missing
from the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from . import _core
from ._types import Member, TopicPartition

__all__ = [
    "IMBALANCE_THRESHOLD",
    "Assignment",
    "GroupQuality",
    "assignable_partitions",
    "count_spread",
    "counts",
    "evaluate",
    "lag_ratio_bound",
    "member_lags",
    "moves",
    "previous_owners",
    "rack_locality",
    "ratio",
    "violations",
]

#: max/mean above this is flagged as imbalanced (Cruise Control's default balance threshold).
IMBALANCE_THRESHOLD: float = _core.IMBALANCE_THRESHOLD

Assignment = Mapping[str, Sequence[TopicPartition]]
_UNSET: Any = object()
Key = tuple[str, int]


def counts(assignment: Assignment) -> list[int]:
    """Number of partitions of each member, in the assignment's member order."""
    return _core.quality_counts(assignment)


def count_spread(assignment: Assignment) -> int:
    """max - min partitions per member (0 for an empty group)."""
    return _core.quality_count_spread(assignment)


def ratio(max_value: float, mean_value: float) -> float | None:
    """max / mean, or None when the mean is 0 (nothing to balance)."""
    return _core.quality_ratio(max_value, mean_value)


def member_lags(assignment: Assignment, lags: Mapping[Key, int] | None) -> dict[str, int]:
    """Sum of partition lags per member (partitions without a known lag count as 0)."""
    return dict(zip(assignment, _core.quality_member_lags(assignment, lags)))


def previous_owners(members: Mapping[str, Member]) -> dict[Key, str]:
    """The previous owner of each partition, from ``owned_partitions`` and ``generation``.

    Claims of one partition by several members: the highest generation wins; a tie at the highest
    generation leaves the partition without a previous owner (the sticky strategies' rule, computed
    by the core: ``rust/core/src/claims.rs``). Every claimed key is returned, in the order first
    claimed, valid or not (:func:`moves` counts the assignable ones).
    """
    return _core.previous_owners(members)


def lag_ratio_bound(
    members: Mapping[str, Member], partitions_per_topic: Mapping[str, int], lags: Mapping[Key, int] | None
) -> float | None:
    """Lower bound of max/mean member lag over all assignments (ignoring subscriptions), or None
    when the assignable partitions have no lag."""
    return _core.quality_lag_ratio_bound(members, partitions_per_topic, lags)


def assignable_partitions(members: Mapping[str, Member], partitions_per_topic: Mapping[str, int]) -> int:
    """Number of partitions of existing topics that at least one member subscribes to."""
    return _core.quality_assignable_partitions(members, partitions_per_topic)


def moves(
    previous: Mapping[Key, str],
    assignment: Assignment,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
) -> tuple[int, int]:
    """(moves, kept): previously owned, still assignable partitions that changed owner / stayed.

    A partition is still assignable when its topic exists, the index is in range and some member
    subscribes to the topic.
    """
    return _core.quality_moves(previous, assignment, members, partitions_per_topic)


def rack_locality(
    assignment: Assignment, members: Mapping[str, Member], partition_racks: Mapping[Key, Iterable[str]] | None
) -> tuple[int, int]:
    """(local, eligible): assigned partitions with a replica on their member's rack / with both a
    member rack and known replica racks."""
    return _core.quality_rack_locality(assignment, members, partition_racks)


def violations(assignment: Assignment, members: Mapping[str, Member], partitions_per_topic: Mapping[str, int]) -> int:
    """Number of invalid placements: a partition given twice, to a non-subscriber, or out of range,
    or a member of the group missing from the result. 0 for every valid assignment."""
    return _core.quality_violations(assignment, members, partitions_per_topic)


@dataclass(frozen=True)
class GroupQuality:
    """The metrics of one assignment of one group (see the module docstring for definitions)."""

    members: int
    partitions: int  # assignable partitions
    assigned: int
    unassigned: int  # assignable but not assigned (cooperative-sticky withholds them for a round)
    min_count: int
    max_count: int
    count_spread: int
    count_ratio: float | None
    max_member_lag: int
    mean_member_lag: float
    lag_ratio: float | None
    lag_ratio_bound: float | None
    lag_imbalanced: bool
    moves: int
    kept: int
    rack_local: int
    rack_eligible: int
    rack_locality: float | None
    violations: int

    def as_dict(self) -> dict[str, object]:
        # shallow: every field is a scalar (dataclasses.asdict deep-copies)
        return {f.name: getattr(self, f.name) for f in fields(self)}


def evaluate(
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    assignment: Assignment,
    *,
    lags: Mapping[Key, int] | None = None,
    partition_racks: Mapping[Key, Iterable[str]] | None = None,
    previous: Mapping[Key, str] | None = None,
    assignable: int | None = None,
    lag_bound: Any = _UNSET,
) -> GroupQuality:
    """All metrics of ``assignment`` for the group ``members`` (see :class:`GroupQuality`).

    ``previous``, ``assignable`` and ``lag_bound`` depend on the group only; callers measuring
    several assignments of one group may pass them precomputed (:func:`previous_owners`,
    :func:`assignable_partitions`, :func:`lag_ratio_bound`).
    """
    if previous is None:
        previous = previous_owners(members)
    known = lag_bound is not _UNSET
    fields_ = _core.quality_evaluate(
        members,
        partitions_per_topic,
        assignment,
        lags,
        partition_racks,
        previous,
        assignable,
        known,
        lag_bound if known else None,
    )
    return GroupQuality(**fields_)
