"""Who owned which partition when, from the consumers' own rebalance callbacks (the broker soak test,
tests/broker/test_broker_soak.py; unit tests in tests/unit/test_soak_ownership.py).

Each member writes its ``assign``, ``revoke`` and ``lost`` callbacks with the partitions they carried
(tests/support/soak_worker.py). A member owns a partition from an ``assign`` callback to its
``revoke`` callback, or to the member's end (its poll loop ended, or it was killed). A ``lost``
callback (the member was fenced: the coordinator had already dropped it and may have handed its
partitions on) ends a span that cannot be judged; those spans are left out and counted.

What the group protocol guarantees, and so what :func:`overlaps` demands:

* **The coordinator** (Apache Kafka's ``CurrentAssignmentBuilder``, KIP-848) gives a partition to a
  new member only after the previous owner *reported*, in the owned-partitions field of a
  ``ConsumerGroupHeartbeat``, that it no longer owns it, or after the previous owner left or was
  fenced. A member reports what it owns after its callbacks ran, so two members' spans of a
  partition never intersect: that is the rule, with one exception.
* **A member's first assignment after it joins** (at its start, or after a ``lost`` callback) can be
  stale in librdkafka (2.16, the client under test; ``src/rdkafka_cgrp.c``). Until the member starts
  reconciling that assignment (its join state stays ``INIT`` while it fetches the metadata of the
  assigned topic ids, which took seconds on a loaded machine), every heartbeat it sends is a full
  request whose owned partitions are its current assignment, the empty list. At the next target epoch
  the coordinator reads that as "owns nothing": the partitions it must give up are moved to another
  member at once. The member then reconciles the first, stale assignment anyway (an ``assign``
  callback) and revokes those partitions when the newer assignment reaches it (a ``revoke`` callback).
  The two members' callbacks overlap, while the coordinator never had the partition in two members'
  assignments (the test checks the coordinator's view on every describe).

So an overlap is excused only when it has exactly that shape: the span of one member began with its
first ``assign`` callback after joining, the same member's ``revoke`` callback ended it, and the
other member kept the partition at least until then. Every other overlap fails, including a
first-after-join span that the member never revoked, or one the other member gave up first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Span:
    member: str
    start: float
    end: float
    #: Began with the member's first ``assign`` callback after it joined (see the module docstring).
    first_after_join: bool
    #: Ended by the member's own ``revoke`` callback (not by its end).
    revoked: bool


@dataclass
class Ledger:
    """What the members consumed and owned, per group, read incrementally from their event files."""

    values: dict[str, set[int]] = field(default_factory=dict)
    callbacks: dict[str, int] = field(default_factory=lambda: {"assign": 0, "revoke": 0, "lost": 0})
    #: (group, member) -> [(event, monotonic time, partitions)], in the member's order.
    ownership: dict[tuple[str, str], list[tuple[str, float, list[TopicPartition]]]] = field(default_factory=dict)
    #: event file -> monotonic time its process's poll loops ended.
    closing: dict[Path, float] = field(default_factory=dict)
    _offsets: dict[Path, int] = field(default_factory=dict)

    def read(self, paths: Iterable[Path]) -> None:
        for path in paths:
            if not path.exists():
                continue
            with open(path, "rb") as fh:
                fh.seek(self._offsets.get(path, 0))
                data = fh.read()
            end = data.rfind(b"\n") + 1  # a line still being written is read next time
            self._offsets[path] = self._offsets.get(path, 0) + end
            for line in data[:end].splitlines():
                self.add(path, json.loads(line))

    def add(self, path: Path, e: dict) -> None:
        if e["ev"] == "records":
            self.values.setdefault(e["g"], set()).update(e["v"])
        elif e["ev"] in self.callbacks:
            self.callbacks[e["ev"]] += 1
            parts = [(t, p) for t, p in e["p"]]
            self.ownership.setdefault((e["g"], e["m"]), []).append((e["ev"], e["mono"], parts))
        elif e["ev"] == "closing":
            self.closing[path] = e["mono"]


def spans(
    ownership: dict[tuple[str, str], list[tuple[str, float, list[TopicPartition]]]],
    ends: dict[tuple[str, str], float],
) -> tuple[dict[tuple[str, str, int], list[Span]], int]:
    """(group, topic, partition) -> the members' spans of it, and the number of spans a ``lost``
    callback ended (left out). ``ends`` is (group, member) -> when the member stopped consuming
    (absent: still running, ``inf``)."""
    out: dict[tuple[str, str, int], list[Span]] = {}
    unjudged = 0
    for (group, member), events in ownership.items():
        held: dict[TopicPartition, tuple[float, bool]] = {}
        joining = True  # the next assign callback is the first after joining
        for ev, mono, parts in events:
            first = ev == "assign" and joining
            for tp in parts:
                if ev == "assign":
                    held[tp] = (mono, first)
                elif tp in held:
                    start, was_first = held.pop(tp)
                    if ev == "revoke":
                        out.setdefault((group, *tp), []).append(Span(member, start, mono, was_first, True))
                    else:
                        unjudged += 1
            joining = ev == "lost"
        for tp, (start, was_first) in held.items():
            end = ends.get((group, member), math.inf)
            out.setdefault((group, *tp), []).append(Span(member, start, end, was_first, False))
    return out, unjudged


def stale_first_assignment(a: Span, b: Span) -> bool:
    """Whether the overlap of ``a`` and ``b`` has the shape of librdkafka's stale first assignment
    (module docstring): one of them began with its member's first assign callback after joining and
    was ended by that member's revoke callback, while the other held the partition at least as long."""
    return any(s.first_after_join and s.revoked and o.end >= s.end for s, o in ((a, b), (b, a)))


def overlaps(
    ownership: dict[tuple[str, str], list[tuple[str, float, list[TopicPartition]]]],
    ends: dict[tuple[str, str], float],
) -> tuple[list[str], list[str], int]:
    """Two members of a group owning a partition at once: (overlaps that fail, overlaps excused as a
    stale first assignment, spans left out because a ``lost`` callback ended them)."""
    by_partition, unjudged = spans(ownership, ends)
    found: list[str] = []
    excused: list[str] = []
    for key, members_spans in sorted(by_partition.items()):
        ordered = sorted(members_spans, key=lambda s: (s.start, s.end))
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if b.start >= a.end:
                    break  # the rest start later still
                if a.member == b.member:
                    continue
                text = f"{key}: {a.member} [{a.start:.3f}, {a.end:.3f}] and {b.member} [{b.start:.3f}, {b.end:.3f}]"
                (excused if stale_first_assignment(a, b) else found).append(text)
    return found, excused, unjudged
