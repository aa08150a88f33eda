"""The Python ``failover`` placement that ``_core.failover_winners`` replaced (the priority rule
and the per-topic winner loop of ``kassign.assignors.failover``), kept as the oracle of
``tests/unit/test_failover_kernel.py``."""

from __future__ import annotations

import struct
from typing import Any

from kassign.assignors._greedy import Inputs

_INT32 = struct.Struct(">i")


def priority(user_data: bytes | None) -> int | None:
    """The priority in a member's user data, or None when it is missing or malformed."""
    if user_data is None or len(user_data) != 4:
        return None
    return int(_INT32.unpack(user_data)[0])


def rank_key(user_data: bytes | None) -> tuple[int, int]:
    """Sort key where larger is better: valid priorities above every missing/malformed one."""
    p = priority(user_data)
    return (0, 0) if p is None else (1, p)


def owners_of(inputs: Inputs, **options: Any) -> dict[str, list[int]]:
    """``failover.owners_of`` as it was in Python."""
    if options:
        raise TypeError(f"assign: strategy 'failover' takes no options, got {', '.join(sorted(options))}")
    members, partitions_per_topic = inputs.members, inputs.partitions_per_topic
    keys = [rank_key(members[m].user_data) for m in inputs.ids]
    own: dict[str, list[int]] = {}
    for t, s in inputs.subs.items():
        # Highest key wins; among equal keys the smallest index (member id), since max() keeps
        # the first maximum and ``s`` is ascending.
        winner = max(s, key=keys.__getitem__)
        own[t] = [winner] * partitions_per_topic[t]
    return own
