"""The Python reference of :mod:`kassign.quality` (formerly ``kassign/fleet/quality.py``): the
fleet metrics written in Python, before the core's (``rust/core/src/fleet/metrics.rs``) became their
one implementation. ``test_quality_oracle.py`` compares the two on random inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kassign import Member, TopicPartition

# the threshold is the core's one constant (rust/core/src/fleet/metrics.rs), not defined again here
from kassign.quality import IMBALANCE_THRESHOLD, GroupQuality  # the result's fields are the API's

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


Assignment = Mapping[str, Sequence[TopicPartition]]
_UNSET: Any = object()
Key = tuple[str, int]


def counts(assignment: Assignment) -> list[int]:
    """Number of partitions of each member, in the assignment's member order."""
    return [len(tps) for tps in assignment.values()]


def count_spread(assignment: Assignment) -> int:
    """max - min partitions per member (0 for an empty group)."""
    c = counts(assignment)
    return max(c) - min(c) if c else 0


def ratio(max_value: float, mean_value: float) -> float | None:
    """max / mean, or None when the mean is 0 (nothing to balance)."""
    return max_value / mean_value if mean_value > 0 else None


def member_lags(assignment: Assignment, lags: Mapping[Key, int] | None) -> dict[str, int]:
    """Sum of partition lags per member (partitions without a known lag count as 0)."""
    if not lags:
        return {m: 0 for m in assignment}
    get = lags.get
    return {m: sum(get((tp[0], tp[1]), 0) for tp in tps) for m, tps in assignment.items()}


def previous_owners(members: Mapping[str, Member]) -> dict[Key, str]:
    """The previous owner of each partition, from ``owned_partitions`` and ``generation``.

    Claims of one partition by several members: the highest generation wins; a tie at the highest
    generation leaves the partition without a previous owner (the sticky strategies' rule, computed
    by the core: ``rust/core/src/claims.rs``). Every claimed key is returned, in the order first
    claimed, valid or not (:func:`moves` counts the assignable ones).
    """
    from kassign import _core

    return _core.previous_owners(members)


def lag_ratio_bound(
    members: Mapping[str, Member], partitions_per_topic: Mapping[str, int], lags: Mapping[Key, int] | None
) -> float | None:
    """Lower bound of max/mean member lag over all assignments (ignoring subscriptions), or None
    when the assignable partitions have no lag."""
    if not lags or not members:
        return None
    subscribed: set[str] = set()
    for m in members.values():
        subscribed.update(m.topics)
    total = top = 0
    for (t, p), lag in lags.items():
        if t in subscribed and 0 <= p < partitions_per_topic.get(t, 0):
            total += lag
            if lag > top:
                top = lag
    if total == 0:
        return None
    mean = total / len(members)
    return max(top, mean) / mean


def assignable_partitions(members: Mapping[str, Member], partitions_per_topic: Mapping[str, int]) -> int:
    """Number of partitions of existing topics that at least one member subscribes to."""
    subscribed: set[str] = set()
    for m in members.values():
        subscribed.update(m.topics)
    return sum(partitions_per_topic.get(t, 0) for t in subscribed)


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
    subscribed: set[str] = set()
    for m in members.values():
        subscribed.update(m.topics)
    owner_now: dict[Key, str] = {}
    for mid, tps in assignment.items():
        for tp in tps:
            owner_now[(tp[0], tp[1])] = mid
    moved = kept = 0
    for key, prev in previous.items():
        t, p = key
        if t not in subscribed or not 0 <= p < partitions_per_topic.get(t, 0):
            continue
        if owner_now.get(key) == prev:
            kept += 1
        else:
            moved += 1
    return moved, kept


def rack_locality(
    assignment: Assignment, members: Mapping[str, Member], partition_racks: Mapping[Key, Iterable[str]] | None
) -> tuple[int, int]:
    """(local, eligible): assigned partitions with a replica on their member's rack / with both a
    member rack and known replica racks."""
    if not partition_racks:
        return 0, 0
    local = eligible = 0
    for mid, tps in assignment.items():
        rack = members[mid].rack if mid in members else None
        if not rack:
            continue
        for tp in tps:
            racks = partition_racks.get((tp[0], tp[1]))
            if not racks:
                continue
            eligible += 1
            if rack in racks:
                local += 1
    return local, eligible


def violations(assignment: Assignment, members: Mapping[str, Member], partitions_per_topic: Mapping[str, int]) -> int:
    """Number of invalid placements: a partition given twice, to a non-subscriber, or out of range,
    or a member of the group missing from the result. 0 for every valid assignment."""
    bad = sum(1 for m in members if m not in assignment)
    seen: set[Key] = set()
    for mid, tps in assignment.items():
        m = members.get(mid)
        if m is None:
            bad += len(tps) or 1
            continue
        topics = set(m.topics)
        for tp in tps:
            key = (tp[0], tp[1])
            if key in seen or tp[0] not in topics or not 0 <= tp[1] < partitions_per_topic.get(tp[0], 0):
                bad += 1
            seen.add(key)
    return bad


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
    c = counts(assignment) or [0]
    n = len(assignment)
    assigned = sum(c)
    total = assignable_partitions(members, partitions_per_topic) if assignable is None else assignable
    if lag_bound is _UNSET:
        lag_bound = lag_ratio_bound(members, partitions_per_topic, lags)
    ml = list(member_lags(assignment, lags).values()) or [0]
    max_lag = max(ml)
    mean_lag = sum(ml) / n if n else 0.0
    lag_r = ratio(max_lag, mean_lag)
    if previous is None:
        previous = previous_owners(members)
    moved, kept = moves(previous, assignment, members, partitions_per_topic)
    local, eligible = rack_locality(assignment, members, partition_racks)
    return GroupQuality(
        members=n,
        partitions=total,
        assigned=assigned,
        unassigned=total - assigned,
        min_count=min(c),
        max_count=max(c),
        count_spread=max(c) - min(c),
        count_ratio=ratio(max(c), assigned / n if n else 0.0),
        max_member_lag=max_lag,
        mean_member_lag=mean_lag,
        lag_ratio=lag_r,
        lag_ratio_bound=lag_bound,
        lag_imbalanced=lag_r is not None and lag_r > IMBALANCE_THRESHOLD,
        moves=moved,
        kept=kept,
        rack_local=local,
        rack_eligible=eligible,
        rack_locality=local / eligible if eligible else None,
        violations=violations(assignment, members, partitions_per_topic),
    )
