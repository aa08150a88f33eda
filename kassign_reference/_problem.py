"""The interned problem the reference algorithms work on, built exactly as the Rust core builds it.

Topics are sorted by name; partitions get flat ids (topic base + index), so flat-id order is
(topic, partition) order. Members are sorted by id; their index is the tie-break everywhere.
Owned partitions are filtered to existing topics and in-range indexes and deduplicated.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping

from kassign._types import Member


class Problem:
    __slots__ = (
        "generation",
        "ids",
        "members",
        "num_partitions",
        "owned",
        "partition_racks",
        "rack",
        "raw_subs",
        "subs",
        "topic_base",
        "topic_len",
        "topics",
    )

    def __init__(
        self,
        members: Mapping[str, Member],
        partitions_per_topic: Mapping[str, int],
        partition_racks: Iterable[tuple[str, int, Iterable[str]]] = (),
    ) -> None:
        self.topics = sorted(partitions_per_topic)
        index = {t: i for i, t in enumerate(self.topics)}
        self.topic_len = [partitions_per_topic[t] for t in self.topics]
        self.topic_base = [0]
        for n in self.topic_len:
            self.topic_base.append(self.topic_base[-1] + n)
        self.num_partitions = self.topic_base[-1]
        self.ids = sorted(members)
        self.members = [members[m] for m in self.ids]
        self.raw_subs = [frozenset(m.topics) for m in self.members]
        self.subs = [sorted(index[t] for t in s if t in index) for s in self.raw_subs]
        self.owned: list[list[int]] = []
        for m in self.members:
            flat = set()
            for t, p in m.owned_partitions:
                ti = index.get(t)
                if ti is not None and 0 <= p < self.topic_len[ti]:
                    flat.add(self.topic_base[ti] + p)
            self.owned.append(sorted(flat))
        self.generation = [m.generation for m in self.members]
        self.rack: list[str | None] = [m.rack or None for m in self.members]
        self.partition_racks: list[frozenset[str]] | None = None
        racks = list(partition_racks)
        if racks:
            pr: list[set[str]] = [set() for _ in range(self.num_partitions)]
            for t, p, rs in racks:
                ti = index.get(t)
                if ti is not None and 0 <= p < self.topic_len[ti]:
                    pr[self.topic_base[ti] + p].update(r for r in rs if r)
            self.partition_racks = [frozenset(s) for s in pr]

    def topic_of(self, flat: int) -> int:
        return bisect_right(self.topic_base, flat) - 1

    def uniform(self) -> bool:
        """Java's constrained-path test: every member's raw topic set is the same."""
        return len(set(self.raw_subs)) <= 1

    def rack_aware(self) -> bool:
        """KIP-881 conditions, judged on the partitions being assigned (topics some member
        subscribes to): some member has a rack, member and partition racks intersect, and not
        every such partition has a replica on every rack that appears among them."""
        if self.partition_racks is None:
            return False
        member_racks = {r for r in self.rack if r is not None}
        if not member_racks:
            return False
        subscribed = {t for s in self.subs for t in s}
        assigned = [
            self.partition_racks[p]
            for t in sorted(subscribed)
            for p in range(self.topic_base[t], self.topic_base[t + 1])
        ]
        all_racks: set[str] = set()
        for rs in assigned:
            all_racks |= rs
        if not (member_racks & all_racks):
            return False
        return any(len(rs) < len(all_racks) for rs in assigned)
