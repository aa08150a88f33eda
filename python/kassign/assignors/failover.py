"""``failover``: active/passive consumption by priority (the streamthoughts FailoverAssignor).

Each member advertises a priority in its subscription user data: exactly 4 bytes, a big-endian
signed int32 (priority 10 is ``00 00 00 0a``). For every topic, the subscriber with the highest
priority gets all of the topic's partitions; equal priorities go to the smallest member id. When
that member leaves, the next one takes over; when it comes back, it takes the topic back.

Deliberate differences from the streamthoughts implementation (and the blog post it came from):

* Per topic, among subscribers. There, one winner takes every partition of every subscribed
  topic, even topics it does not subscribe to itself; here a member only ever gets topics it
  subscribes to, so members with different subscriptions can each be active for their topics.
* Missing or malformed user data (None, or not exactly 4 bytes) ranks below every valid priority,
  including -2**31. There, user data is read unchecked and short or missing data crashes the
  group leader. (Bytes beyond the first 4 are also rejected, not ignored.)
* Ties break by member id, so the result is deterministic; there, ties follow HashMap order.
* No default priority is invented here: a member that wants one sends it. (The repository's
  configuration default is Integer.MIN_VALUE; the blog post shows Integer.MAX_VALUE.)

The strategy takes no options.
"""

from __future__ import annotations

import struct
from typing import Any

from .._types import Member, TopicPartition
from ._greedy import Inputs, build_result

NAME = "failover"

_INT32 = struct.Struct(">i")


def priority(user_data: bytes | None) -> int | None:
    """The priority in a member's user data, or None when it is missing or malformed."""
    if user_data is None or len(user_data) != 4:
        return None
    return int(_INT32.unpack(user_data)[0])


def _rank_key(user_data: bytes | None) -> tuple[int, int]:
    """Sort key where larger is better: valid priorities above every missing/malformed one."""
    p = priority(user_data)
    return (0, 0) if p is None else (1, p)


def reads_history(options: dict[str, Any]) -> bool:
    """The result does not depend on owned partitions or generations (priorities decide)."""
    return False


def owners(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: dict[tuple[str, int], int] | None = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, list[int]]:
    """The ``failover`` placement as owner arrays: topic -> the owner of each partition, as an
    index into ``sorted(members)`` (what :func:`assign` turns into lists)."""
    return owners_of(Inputs(members, partitions_per_topic, lags), **options)


def owners_of(inputs: Inputs, **options: Any) -> dict[str, list[int]]:
    """:func:`owners` on inputs prepared once (:class:`kassign.assignors._greedy.Inputs`)."""
    if options:
        raise TypeError(f"assign: strategy {NAME!r} takes no options, got {', '.join(sorted(options))}")
    members, partitions_per_topic = inputs.members, inputs.partitions_per_topic
    keys = [_rank_key(members[m].user_data) for m in inputs.ids]
    own: dict[str, list[int]] = {}
    for t, s in inputs.subs.items():
        # Highest key wins; among equal keys the smallest index (member id), since max() keeps
        # the first maximum and ``s`` is ascending.
        winner = max(s, key=keys.__getitem__)
        own[t] = [winner] * partitions_per_topic[t]
    return own


def assign(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: dict[tuple[str, int], int] | None = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, list[TopicPartition]]:
    """The ``failover`` strategy (module docstring); inputs already validated by ``kassign.assign``."""
    own = owners(members, partitions_per_topic, lags=lags, partition_racks=partition_racks, **options)
    return build_result(list(members), sorted(members), own)
