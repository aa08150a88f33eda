"""``failover``: active/passive consumption by priority (the streamthoughts FailoverAssignor).

Each member advertises a priority in its subscription user data: exactly 4 bytes, a big-endian
signed int32 (priority 10 is ``00 00 00 0a``; :func:`kassign.protocol.encode_priority` and
:func:`kassign.protocol.decode_priority`). For every topic, the subscriber with the highest
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

from array import array
from typing import Any

from .._core import failover_winners
from .._inputs import check_options
from .._types import Member, TopicPartition
from ._greedy import Inputs, build_result

NAME = "failover"


def reads_history(options: None) -> bool:
    """The result does not depend on owned partitions or generations (priorities decide)."""
    return False


def owners(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: dict[tuple[str, int], int] | None = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, array[int]]:
    """The ``failover`` placement as owner arrays: topic -> the owner of each partition
    (``array('i')``), as an index into ``sorted(members)`` (what :func:`assign` turns into lists).
    Checks ``options`` (there are none)."""
    check_options("assign", NAME, True, options)
    return owners_of(Inputs(members, partitions_per_topic, lags))


def owners_of(inputs: Inputs, options: None = None) -> dict[str, array[int]]:
    """:func:`owners` on inputs prepared once (:class:`kassign.assignors._greedy.Inputs`). The
    winner of each topic is the core's (``_core.failover_winners``; priorities read by
    :func:`kassign.protocol.decode_priority`)."""
    members, partitions_per_topic, subs = inputs.members, inputs.partitions_per_topic, inputs.subs
    topics = list(subs)
    winners = failover_winners([members[m].user_data for m in inputs.ids], [subs[t] for t in topics])
    return {t: array("i", [w]) * partitions_per_topic[t] for t, w in zip(topics, winners)}


def assign(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: dict[tuple[str, int], int] | None = None,
    partition_racks: Any = None,
    options: None = None,
) -> dict[str, list[TopicPartition]]:
    """The ``failover`` strategy (module docstring); inputs and options (none) already checked by
    ``kassign.assign``."""
    own = owners_of(Inputs(members, partitions_per_topic, lags))
    return build_result(list(members), sorted(members), own)
