"""The Python reference of the fleet's churn replay (formerly ``kassign/fleet/churn.py``; the
fleet job replays in the core, ``rust/core/src/fleet/churn.rs``): members leave and join, one
rebalance each; count partition moves.

The replay starts from a strategy's assignment of the group and alternates events: a member
leaves, then a new member joins with the subscription and rack of the one that left (a rolling
restart: the restarted consumer comes back with a new member id), and so on. The events come from
the core (``kassign._core.churn_events``: seeded SplitMix64 draws, docs/fleet.md "Churn replay"),
the same ones the fleet job's replay in the core uses; this module replays them with
``kassign.assign``. Each rebalance feeds the previous result back as ``owned_partitions`` with
the next generation, exactly as a consumer would. When a strategy leaves assignable partitions
unassigned (cooperative-sticky withholds partitions that change owner), follow-up rebalances run
until everything is assigned (at most 3), as cooperative consumers rejoin after revoking.

A move is a partition given to a member other than its last owner; the partitions of a departed
member count when they land elsewhere. Withheld partitions count once, when they land.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kassign
from kassign import Member, TopicPartition
from oracles import quality

MAX_FOLLOW_UPS = 3


@dataclass(frozen=True)
class ChurnResult:
    rounds: int  # events replayed (leave or join)
    rebalances: int  # assignments computed, including cooperative follow-ups
    moves: int  # cumulative partition moves
    time_ms: float  # time spent in kassign.assign


def replay(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    start: Mapping[str, Sequence[TopicPartition]],
    *,
    events: Sequence[tuple[str, str, str | None]],
    lags: Mapping[tuple[str, int], int] | None = None,
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
    options: Mapping[str, Any] | None = None,
) -> ChurnResult:
    """Replay ``events`` on the group ``members`` starting from the assignment ``start`` (which
    ``strategy`` with ``options`` produced for ``members``). ``events`` are what
    ``kassign._core.churn_events(list(members), rounds, seed)`` returns: ``("leave", id, None)``
    or ``("join", id, like)``, a new member with the subscription, rack and user data of
    ``members[like]``."""
    gen = max((m.generation for m in members.values()), default=-1) + 1
    profile: dict[str, Member] = dict(members)  # subscription/rack/static id of current members
    current: dict[str, list[TopicPartition]] = {mid: list(tps) for mid, tps in start.items()}
    last_owner: dict[tuple[str, int], str] = {}
    for mid, tps in current.items():
        for tp in tps:
            last_owner[(tp[0], tp[1])] = mid
    moves = rebalances = replayed = 0
    spent = 0.0
    for kind, mid, like in events:
        if kind == "leave":
            del profile[mid]
            current.pop(mid, None)
        elif kind == "join" and like is not None:
            template = members[like]
            profile[mid] = Member(template.topics, rack=template.rack, user_data=template.user_data)
        else:
            raise ValueError(f"events: expected ('leave', id, None) or ('join', id, like), got {(kind, mid, like)!r}")
        replayed += 1
        for _ in range(1 + MAX_FOLLOW_UPS):
            group = {
                mid: Member(
                    m.topics,
                    owned_partitions=current.get(mid, ()),
                    generation=gen if current.get(mid) else -1,
                    rack=m.rack,
                    group_instance_id=m.group_instance_id,
                    user_data=m.user_data,
                )
                for mid, m in profile.items()
            }
            t0 = time.perf_counter()
            result = kassign.assign(
                strategy, group, partitions_per_topic, lags=lags, partition_racks=partition_racks, **(options or {})
            )
            spent += time.perf_counter() - t0
            rebalances += 1
            gen += 1
            assigned = 0
            for mid, tps in result.items():
                assigned += len(tps)
                for tp in tps:
                    key = (tp[0], tp[1])
                    prev = last_owner.get(key)
                    if prev is not None and prev != mid:
                        moves += 1
                    last_owner[key] = mid
            current = {mid: list(tps) for mid, tps in result.items()}
            if assigned >= quality.assignable_partitions(group, partitions_per_topic):
                break
    return ChurnResult(rounds=replayed, rebalances=rebalances, moves=moves, time_ms=spent * 1000.0)
