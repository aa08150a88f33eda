"""Greedy least-loaded placement, shared by the ``lag-aware`` and ``fair`` strategies.

Both strategies place partitions one at a time, in an order they choose, on the "least-loaded"
member among the partition's eligible members (the subscribers of its topic). This module holds
the data structure that answers "who is least loaded among this subset?" in O(log n) instead of
scanning every subscriber, so 100k partitions x 100 members stays well under a second.

Members are dense indices ``0..n-1`` assigned in member-id order, so comparing indices is
comparing member ids (the tie-break of every rule here).

Load of member ``i`` = ``(count[i], lag[i])``. Two selection rules:

* ``skew == 0`` (count first): the eligible member with the smallest ``(count, lag, index)``.
* ``skew > 0``: among eligible members whose count is at most ``min count + skew`` (the minimum
  taken over the eligible members), the smallest ``(lag, count, index)``. Counts then never
  differ by more than ``skew + 1`` among members eligible for the same partitions.
  With ``skew == 0`` both rules agree.

Implementation: each distinct eligible set is a :class:`_Pool`, a dict ``count -> heap of (lag,
index, version)``. A member belongs to every pool of a topic it subscribes to; placing a
partition bumps the member's version and pushes one fresh entry into each of its pools. Entries
whose version is not the member's current one are stale and dropped lazily when they surface at
the top of a heap, so every member always has exactly one valid entry per pool, in the bucket of
its true count with its true lag.
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._types import Member, TopicPartition


class _Pool:
    __slots__ = ("buckets", "lo")

    def __init__(self, members: Sequence[int], counts: Sequence[int], lags: Sequence[int]) -> None:
        # Pools are built before any placement, from the members' starting counts.
        self.buckets: dict[int, list[tuple[int, int, int]]] = {}
        for i in members:
            self.buckets.setdefault(counts[i], []).append((lags[i], i, 0))
        for heap in self.buckets.values():
            heap.sort()  # a sorted list is a valid heap
        self.lo = min(self.buckets)  # no valid entry lives in a bucket below ``lo``


class Balancer:
    """Counts and lags of ``n`` members, with least-loaded selection over eligible subsets."""

    __slots__ = ("_keep", "_max_count", "_pools", "_pools_of", "_version", "count", "lag")

    def __init__(
        self, n: int, count: int = 0, lags: Sequence[int] | None = None, counts: Sequence[int] | None = None
    ) -> None:
        """``n`` members starting with ``count`` partitions each (or ``counts[i]``) and ``lags``."""
        self.count = list(counts) if counts is not None else [count] * n
        self.lag = list(lags) if lags is not None else [0] * n
        self._version = [0] * n
        self._pools_of: list[list[_Pool]] = [[] for _ in range(n)]
        self._pools: dict[int, _Pool] = {}
        self._keep: list[tuple[int, ...]] = []
        self._max_count = max(self.count, default=0)

    def pool(self, members: tuple[int, ...]) -> _Pool:
        """The pool of an eligible set (a non-empty tuple of member indices), interned by identity
        (pass the same tuple object for the same set, as :func:`subscribers_by_topic` returns).

        Must be called for every eligible set before the first :meth:`place`.
        """
        key = id(members)
        p = self._pools.get(key)
        if p is None:
            if not members:
                raise ValueError("an eligible set must not be empty")
            p = _Pool(members, self.count, self.lag)
            self._pools[key] = p
            self._keep.append(members)  # keeps ``id(members)`` unique while this Balancer lives
            for i in members:
                self._pools_of[i].append(p)
        return p

    def pick(self, pool: _Pool, skew: int = 0) -> int:
        """The member of ``pool`` that the selection rule (module docstring) chooses."""
        version = self._version
        buckets = pool.buckets
        lo = pool.lo
        while True:
            heap = buckets.get(lo)
            if heap:
                lag, i, v = heap[0]
                if version[i] == v:
                    break
                heappop(heap)
                continue
            if heap is not None:
                del buckets[lo]
            lo += 1
        pool.lo = lo
        if skew == 0:
            return i
        best = (lag, lo, i)
        top = min(lo + skew, self._max_count)
        for c in range(lo + 1, top + 1):
            heap = buckets.get(c)
            while heap:
                lag, j, v = heap[0]
                if version[j] == v:
                    if (lag, c, j) < best:
                        best = (lag, c, j)
                    break
                heappop(heap)
        return best[2]

    def place(self, i: int, lag: int) -> None:
        """Give member ``i`` one more partition carrying ``lag``."""
        c = self.count[i] + 1
        self.count[i] = c
        total = self.lag[i] + lag
        self.lag[i] = total
        v = self._version[i] + 1
        self._version[i] = v
        if c > self._max_count:
            self._max_count = c
        entry = (total, i, v)
        for p in self._pools_of[i]:
            heap = p.buckets.get(c)
            if heap is None:
                p.buckets[c] = [entry]
            else:
                heappush(heap, entry)


def build_result(
    members: Sequence[str], sorted_ids: Sequence[str], owners: dict[str, list[int]]
) -> dict[str, list[TopicPartition]]:
    """member id -> partitions sorted by (topic, partition), every member present, in input order.

    ``owners`` maps each placed topic to the owner index (into ``sorted_ids``) of each partition.
    """
    from .. import _core
    from .._types import TopicPartition

    # Built in Rust: GC-untracked TopicPartition objects (a million tracked ones make CPython run
    # full collections that stall every thread) and short GIL releases between chunks.
    topics = sorted(owners)
    lists = _core.result_lists(TopicPartition, len(sorted_ids), topics, [owners[t] for t in topics])
    rank = {m: k for k, m in enumerate(sorted_ids)}
    return {m: lists[rank[m]] for m in members}


#: The key of :attr:`Inputs.shared` holding each topic's lag array: topic -> the lag of each of its
#: partitions (0 without one), or None when they are all 0. Filled per topic by the strategies that
#: read it (lag-aware), or for every topic up front by the fleet core, which has the arrays decoded.
TOPIC_LAGS = "topic-lags"


class Inputs:
    """A Python strategy's arguments with what every strategy derives from them, computed once.

    ``kassign.assign`` builds one per call. The fleet job builds one per member set and hands the
    same object to every Python strategy of that churn round, so the sorted ids, the subscribers
    of each topic and the per-topic lag arrays are derived once per round instead of once per
    strategy. Derived values are read-only for the strategies (they return new owner lists).
    ``history`` is the members with their owned partitions and generations when they differ from
    ``members``; ``previous`` (set by :meth:`with_previous`) is what the sticky strategies read of
    that history, already derived: topic -> {member index: [partition]} for the partitions whose
    previous owner (the highest generation's claim; a tie between members leaves none) is that
    member, over the subscribed topics (``subs``) and partitions in range. The fleet job passes
    ``previous`` from the core instead of members that carry their owned partitions.
    ``shared`` holds values derived from ``partitions_per_topic`` and ``lags`` alone (e.g. the lag
    array of each topic): the fleet job passes one dict to every ``Inputs`` of a group, since
    those two are the same in every churn round (:data:`TOPIC_LAGS`: the lag arrays).
    ``ids`` and ``subs``, when given, are ``sorted(members)`` and :attr:`subs` already derived by
    the caller (the fleet core derives both from its interned problem: the same list, the same
    dict order and the same tuple sharing as :func:`subscribers_by_topic`; the tests compare them).
    """

    __slots__ = ("_subs", "history", "ids", "lags", "members", "memo", "partitions_per_topic", "previous", "shared")

    def __init__(
        self,
        members: dict[str, Member],
        partitions_per_topic: dict[str, int],
        lags: dict[tuple[str, int], int] | None = None,
        history: dict[str, Member] | None = None,
        *,
        shared: dict[str, Any] | None = None,
        ids: list[str] | None = None,
        subs: dict[str, tuple[int, ...]] | None = None,
    ) -> None:
        self.members = members
        self.partitions_per_topic = partitions_per_topic
        self.lags = lags
        self.history = members if history is None else history
        self.ids = sorted(members) if ids is None else ids
        self._subs: dict[str, tuple[int, ...]] | None = subs
        #: Values a strategy derives from these inputs alone, by name (e.g. lag arrays).
        self.memo: dict[str, Any] = {}
        #: Values derived from ``partitions_per_topic`` and ``lags`` alone, by name.
        self.shared: dict[str, Any] = {} if shared is None else shared
        self.previous: dict[str, dict[int, list[int]]] | None = None

    @property
    def subs(self) -> dict[str, tuple[int, ...]]:
        """:func:`subscribers_by_topic` of the members (ids sorted)."""
        if self._subs is None:
            m = self.members
            self._subs = subscribers_by_topic(self.ids, [m[i].topics for i in self.ids], self.partitions_per_topic)
        return self._subs

    def with_previous(self, previous: dict[str, dict[int, list[int]]]) -> Inputs:
        """The same inputs with the members' history given as ``previous`` (see the class)."""
        out = Inputs.__new__(Inputs)
        out.members, out.partitions_per_topic, out.lags, out.history = (
            self.members,
            self.partitions_per_topic,
            self.lags,
            self.history,
        )
        out.ids, out._subs, out.memo, out.previous = self.ids, self.subs, self.memo, previous
        out.shared = self.shared
        return out


def subscribers_by_topic(
    sorted_ids: Sequence[str], topics_of: Sequence[Sequence[str]], partitions_per_topic: dict[str, int]
) -> dict[str, tuple[int, ...]]:
    """topic -> indices of its subscribers (ascending), for topics with metadata and >= 1 partition.

    Topics a member subscribes to that are missing from ``partitions_per_topic`` have no metadata
    and are skipped, as are topics with 0 partitions. Topics with the same subscribers share one
    tuple object (so callers can intern eligible sets by identity). Members with equal
    subscriptions are handled together: the work is per distinct subscription, not per member.
    """
    classes: dict[Sequence[str], list[int]] = {}
    for i, topics in enumerate(topics_of):
        classes.setdefault(topics, []).append(i)
    class_lists = list(classes.values())
    by_topic: dict[str, list[int]] = {}
    for c, topics in enumerate(classes):
        for t in topics:
            if partitions_per_topic.get(t, 0) > 0:
                lst = by_topic.get(t)
                if lst is None:
                    by_topic[t] = [c]
                else:
                    lst.append(c)
    interned: dict[tuple[int, ...], tuple[int, ...]] = {}
    out: dict[str, tuple[int, ...]] = {}
    for t, cs in by_topic.items():
        key = tuple(cs)
        members = interned.get(key)
        if members is None:
            if len(cs) == 1:
                members = tuple(class_lists[cs[0]])
            else:
                members = tuple(sorted(i for c in cs for i in class_lists[c]))
            interned[key] = members
        out[t] = members
    return out


def deal_global(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, list[int]],
    skew: int = 0,
) -> dict[str, list[int]]:
    """Place every partition of ``subs``' topics with counts and lags kept across all topics.

    Order: topics with the fewest subscribers first, then lag descending, then topics with more
    partitions, then topic name, then partition. Each partition goes to the member
    :meth:`Balancer.pick` chooses among its topic's subscribers. ``arrays`` holds the lag of each
    partition of the topics that have any (absent topics: all 0). Returns topic -> owner indices.
    With no lags this is KIP-49's ``fair``.

    With ``skew == 0`` the placement loop runs in the Rust core (``_core.greedy_deal``);
    :func:`_deal_skewed` places with ``max_skew``.
    """
    if skew:
        return _deal_skewed(n_members, subs, partitions_per_topic, arrays, skew)
    from .. import _core

    topics = sorted(subs, key=lambda t: (len(subs[t]), -partitions_per_topic[t], t))
    sizes = [partitions_per_topic[t] for t in topics]
    lag_of: list[int] | None = None
    if arrays:
        lag_of = []
        for t, size in zip(topics, sizes):
            arr = arrays.get(t)
            lag_of.extend(arr if arr is not None else [0] * size)
    owner_of = _core.greedy_deal(n_members, [subs[t] for t in topics], sizes, lag_of)
    out = {}
    start = 0
    for t, size in zip(topics, sizes):
        out[t] = owner_of[start : start + size]
        start += size
    return out


def _deal_skewed(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, list[int]],
    skew: int = 0,
) -> dict[str, list[int]]:
    """:func:`deal_global` with ``max_skew`` (``skew > 0``): :meth:`Balancer.pick` over each topic's
    subscribers, in the same partition order as the kernel."""
    # Topic order of KIP-49: fewest subscribers, then more partitions, then name. Partitions are
    # numbered g = 0..G-1 in (topic rank, partition) order, so sorting by g is sorting by them.
    topics = sorted(subs, key=lambda t: (len(subs[t]), -partitions_per_topic[t], t))
    sizes = [partitions_per_topic[t] for t in topics]
    starts = [0] * len(topics)
    for r in range(1, len(topics)):
        starts[r] = starts[r - 1] + sizes[r - 1]
    total = starts[-1] + sizes[-1] if topics else 0
    lag_of = [0] * total
    for r, t in enumerate(topics):
        if t in arrays:
            lag_of[starts[r] : starts[r] + sizes[r]] = arrays[t]
    topic_of = [r for r in range(len(topics)) for _ in range(sizes[r])]
    if arrays:
        # Placement order (fewest subscribers, lag descending, g) as one integer key per partition.
        width = max(lag_of) + 1
        n_subs = [len(subs[t]) for t in topics]
        keys = [(n_subs[topic_of[g]] * width + width - 1 - lag_of[g]) * total + g for g in range(total)]
        keys.sort()
        order: Sequence[int] = [key % total for key in keys]
    else:
        order = range(total)
    owner_of = [0] * total
    bal = Balancer(n_members)
    pools = [bal.pool(subs[t]) for t in topics]
    pick = bal.pick
    place = bal.place
    for g in order:
        j = pick(pools[topic_of[g]], skew)
        place(j, lag_of[g])
        owner_of[g] = j
    return {t: owner_of[starts[r] : starts[r] + sizes[r]] for r, t in enumerate(topics)}
