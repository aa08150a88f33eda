"""``fair``: KIP-49's fair partition assignment (apache/kafka PRs #146 and #979, never merged).

Round-robin can pile partitions onto a few members when subscriptions differ. ``fair`` tracks how
many partitions each member holds across all topics and gives every partition to the least-loaded
member that subscribes to its topic (ties: smallest member id). Topics are placed most
constrained first: fewest subscribers, then more partitions, then name; partitions of a topic in
ascending order.

KIP-49's example: T1=2, T2=1, T3=2, T4=1, T5=2 partitions; C1 and C4 subscribe T1..T5, C2 and C3
subscribe T1, T3, T5. Order T2, T4, T1, T3, T5 gives C1 [T2-0, T3-0], C2 [T1-0, T3-1],
C3 [T1-1, T5-0], C4 [T4-0, T5-1].

Differences from the PR: topics a member subscribes to that have no metadata (absent from
``partitions_per_topic``) are skipped instead of raising; ties never depend on map order.
The strategy takes no options.
"""

from __future__ import annotations

from array import array
from typing import Any

from .._inputs import check_options
from .._types import Member, TopicPartition
from ._greedy import Inputs, build_result, deal_global, subscribers_by_topic

NAME = "fair"


def topic_order(members: dict[str, Member], partitions_per_topic: dict[str, int]) -> list[str]:
    """The topics ``fair`` places, in placement order (subscribed topics with >= 1 partition)."""
    ids = sorted(members)
    subs = subscribers_by_topic(ids, [members[m].topics for m in ids], partitions_per_topic)
    return sorted(subs, key=lambda t: (len(subs[t]), -partitions_per_topic[t], t))


def reads_history(options: None) -> bool:
    """The result does not depend on owned partitions or generations."""
    return False


def owners(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: dict[tuple[str, int], int] | None = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, array[int]]:
    """The ``fair`` placement as owner arrays: topic -> the owner of each partition
    (``array('i')``), as an index into ``sorted(members)`` (what :func:`assign` turns into lists).
    Checks ``options`` (there are none)."""
    check_options("assign", NAME, True, options)
    return owners_of(Inputs(members, partitions_per_topic, lags))


def owners_of(inputs: Inputs, options: None = None) -> dict[str, array[int]]:
    """:func:`owners` on inputs prepared once (:class:`kassign.assignors._greedy.Inputs`)."""
    return deal_global(len(inputs.ids), inputs.subs, inputs.partitions_per_topic, {})


def assign(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: dict[tuple[str, int], int] | None = None,
    partition_racks: Any = None,
    options: None = None,
) -> dict[str, list[TopicPartition]]:
    """The ``fair`` strategy (module docstring); inputs and options (none) already checked by
    ``kassign.assign``."""
    own = owners_of(Inputs(members, partitions_per_topic, lags))
    return build_result(list(members), sorted(members), own)
