"""The Python implementations that the Rust kernels of ``fair`` and ``lag-aware`` replaced.

They shipped in ``kassign.assignors`` as the kernels' reference and their fallback beyond int64
(``_greedy._deal_global_py``, ``lag_aware._carried_py`` and ``_Pools``, ``lag_aware._Improver``);
the kernels are now exact for every lag the API accepts (int64 lags, 128-bit sums), so these live
here only as oracles: ``tests/unit/test_greedy_kernels.py`` and ``tests/unit/test_improve_kernel.py`` run
both on random inputs, huge lags included, and compare owners, loads and moves.

The ``max_skew`` placements (``_greedy.Balancer``, ``_greedy._deal_skewed``,
``lag_aware._carry_lag_topic``), the prototype rule (``lag_aware._per_topic``) and the sticky keep
step (``lag_aware._sticky``) were Python loops too, until ``_core.greedy_deal`` and
``_core.greedy_carry_lag`` took ``skew`` and ``_core.greedy_per_topic`` and ``_core.greedy_keep``
came; they are here as :class:`Balancer`, :func:`carry_lag_topic`, :func:`per_topic` and
:func:`sticky`. So is :func:`subscribers_by_topic`, the eligible sets, now derived in the core.

One change from the shipped code: the improvement pass compared lags with ``gap / 2`` as a float,
which rounds once a gap passes 2**53 (the old kernel refused sums from 2**50 and fell back to this
code). The oracle compares doubled integers instead (``2 * lag < gap``), the exact rule, which the
kernel follows; below 2**50 both readings agree.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, insort
from collections.abc import Sequence
from heapq import heapify, heappop, heappush, heapreplace
from typing import Any

from kassign.assignors._greedy import Inputs
from kassign.assignors.lag_aware import (
    _PARTNERS,
    _PARTNERS_WIDE,
    _ROUNDS_EXTRA,
    _ROUNDS_PER_MEMBER,
    _SWAP_SAMPLE,
    _TOLERANCE,
    _WORK_EXTRA,
    _WORK_PER_PARTITION,
    _topic_order,
)


def owner_lists(owners: dict[str, Any]) -> dict[str, list[int]]:
    """The strategies' owner arrays (each an ``array('i')``, checked) as the lists these oracles
    return, in the same topic order."""
    for t, own in owners.items():
        assert isinstance(own, array) and own.typecode == "i", (t, type(own))
    return {t: list(own) for t, own in owners.items()}


def _lag_order(tl: list[int]) -> list[int]:
    """Partition indices by lag descending, ties partition ascending (sort stability)."""
    return sorted(range(len(tl)), key=tl.__getitem__, reverse=True)


Phases = list[tuple[float, "dict[str, list[bool]] | None"]]


def improve(
    n: int,
    subs: dict[str, tuple[int, ...]],
    owners: dict[str, list[int]],
    arrays: dict[str, list[int]],
    load: list[int],
    overall: bool,
    limit: int,
    phases: Phases,
) -> tuple[int, list[int]]:
    """``lag_aware._improve`` in Python (the old ``kernel=False``): same arguments and result."""
    imp = LagImprover(n, subs, owners, arrays, load, overall=overall)
    moved = 0
    for need_rel, frozen in phases:
        moved += imp.run(limit, need_rel=need_rel, frozen=frozen)
    return moved, imp.load


class LagImprover:
    """Moves and swaps that lower the busiest member's lag within the count rule (module docstring).

    ``held[i][key]``: member i's partitions with lag as a sorted list of (lag, g), g indexing
    ``topic_of``/``part_of``;
    ``key`` is the topic in the per-topic modes (exchanges stay inside a topic; topics without
    lag are left out) and ``""`` in global mode (any two topics both members subscribe to).
    """

    def __init__(
        self,
        n: int,
        subs: dict[str, tuple[int, ...]],
        owners: dict[str, list[int]],
        arrays: dict[str, list[int]],
        load: list[int],
        overall: bool,
    ) -> None:
        self.n = n
        self.owners = owners
        self.arrays = arrays
        self.load = list(load)
        self.overall = overall
        self.subs_of: list[frozenset[str]] = []
        topics_of: list[list[str]] = [[] for _ in range(n)]
        for t, s in subs.items():
            for i in s:
                topics_of[i].append(t)
        interned: dict[frozenset[str], frozenset[str]] = {}
        for ts in topics_of:
            f = frozenset(ts)
            self.subs_of.append(interned.setdefault(f, f))
        # Counts: per (member, topic) in the per-topic modes, per member overall in global mode
        # (each mode reads only its own).
        self.count: list[dict[str, int]] = [] if overall else [{} for _ in range(n)]
        self.total = [0] * n
        if overall:
            total = self.total
            for own in owners.values():
                for i in own:
                    total[i] += 1
        else:
            count = self.count
            for t, own in owners.items():
                if t in arrays:
                    for i in own:
                        c = count[i]
                        c[t] = c.get(t, 0) + 1
        self.held: list[dict[str, list[tuple[int, int]]]] = []
        self.topic_of: list[str] = []
        self.part_of: list[int] = []
        self._filled_for: Any = object()
        self.tracked = 0
        self.work = 0

    def _fill(self, frozen: dict[str, list[bool]] | None) -> None:
        if self._filled_for is frozen:
            return
        # Items are (lag, g) with g a global index of the partition (topic_of[g], part_of[g]):
        # integer tuples, so lists sort and bisect without comparing strings.
        topic_of: list[str] = []
        part_of: list[int] = []
        held: list[dict[str, list[tuple[int, int]]]] = [{} for _ in range(self.n)]
        overall = self.overall
        # Idle (lag 0) partitions are tracked too: a busiest member may swap a partition for one.
        # In global mode that includes topics without any lag (cross-topic swaps).
        topics = self.owners if overall else self.arrays
        g = 0
        for t in topics:
            arr = self.arrays.get(t)
            flags = frozen.get(t) if frozen is not None else None
            key = "" if overall else t
            for p, i in enumerate(self.owners[t]):
                if flags is None or not flags[p]:
                    topic_of.append(t)
                    part_of.append(p)
                    item = (arr[p] if arr is not None else 0, g)
                    h = held[i]
                    lst = h.get(key)
                    if lst is None:
                        h[key] = [item]
                    else:
                        lst.append(item)
                    g += 1
        count = g
        # One sort per member list (short C calls) rather than one sort of every partition, which
        # would hold the GIL for the whole sort on a million partitions.
        for h in held:
            for lst in h.values():
                lst.sort()
        self.topic_of, self.part_of = topic_of, part_of
        self.tracked = count
        self.held = held
        self._filled_for = frozen

    def run(self, limit: int, need_rel: float, frozen: dict[str, list[bool]] | None) -> int:
        """Improve until the busiest member is at ``limit`` or nothing helps; returns partition
        moves. ``frozen`` partitions (flags per topic) are left alone; ``need_rel`` is the least
        gain, as a fraction of the busiest member's lag, an exchange must bring."""
        if need_rel >= 1:
            return 0
        self._fill(frozen)
        load = self.load
        ranked = sorted((load[i], i) for i in range(self.n))
        moved = 0
        self.work = 0
        budget = int(_WORK_PER_PARTITION * self.tracked) + _WORK_EXTRA
        stop = max(limit, int(limit * (1 + _TOLERANCE)))
        for _ in range(_ROUNDS_PER_MEMBER * self.n + _ROUNDS_EXTRA):
            la, a = ranked[-1]
            if la <= stop or self.work > budget:
                break
            need = max(1, math.ceil(need_rel * la)) if need_rel > 0 else 1
            best: tuple[int, Any] | None = None
            tried = 0
            subs_a = self.subs_of[a]
            for lb, b in ranked:
                gap = la - lb
                if gap // 2 < need or (best is not None and gap // 2 <= best[0]):
                    break
                if b == a or subs_a.isdisjoint(self.subs_of[b]):
                    continue
                cand = self._best_exchange(a, b, gap)
                if cand is not None and cand[0] >= need and (best is None or cand[0] > best[0]):
                    best = cand
                tried += 1
                if tried >= (_PARTNERS if best is not None else _PARTNERS_WIDE):
                    break
            if best is None:
                break
            _, (b, key, x_item, y_item) = best
            lb = load[b]
            ranked.pop(bisect_left(ranked, (la, a)))
            ranked.pop(bisect_left(ranked, (lb, b)))
            self._transfer(a, b, key, x_item)
            moved += 1
            if y_item is not None:
                self._transfer(b, a, key, y_item)
                moved += 1
            moved += self._bulk(a, b, key, need)
            insort(ranked, (load[a], a))
            insort(ranked, (load[b], b))
        return moved

    def _bulk(self, a: int, b: int, key: str, need: int) -> int:
        """More swaps between the same pair while they pay: b's smallest partition for the largest
        of a's that keeps a at or above b (net d <= gap / 2, d >= ``need``). A member far above the
        rest (a hot partition plus its share of the others) sheds its load in one round instead of
        one swap per round. Returns partition moves."""
        A, B = self.held[a].get(key), self.held[b].get(key)
        if not A or not B or (self.overall and self.subs_of[a] is not self.subs_of[b]):
            return 0
        load = self.load
        moved = 0
        while B:
            y = B[0]
            half = (load[a] - load[b]) // 2
            k = bisect_left(A, (y[0] + half + 1,)) - 1
            if k < 0:
                break
            x = A[k]
            d = x[0] - y[0]
            if d < max(need, 1):
                break
            self._transfer(a, b, key, x)
            self._transfer(b, a, key, y)
            moved += 2
            self.work += 1
        return moved

    def _transfer(self, src: int, dst: int, key: str, item: tuple[int, int]) -> None:
        x, g = item
        t, p = self.topic_of[g], self.part_of[g]
        lst = self.held[src][key]
        del lst[bisect_left(lst, item)]
        insort(self.held[dst].setdefault(key, []), item)
        self.owners[t][p] = dst
        self.load[src] -= x
        self.load[dst] += x
        if self.overall:
            self.total[src] -= 1
            self.total[dst] += 1
        else:
            self.count[src][t] -= 1
            cd = self.count[dst]
            cd[t] = cd.get(t, 0) + 1

    def _best_exchange(self, a: int, b: int, gap: int) -> tuple[int, Any] | None:
        """Best move or swap between a (busiest) and b: (gain, (b, key, a's item, b's item or
        None)), where gain = min(d, gap - d) for the net lag d in (0, gap) going from a to b."""
        perfect = gap // 2
        best_gain = 0
        best: Any = None
        held_b = self.held[b]
        subs_a, subs_b = self.subs_of[a], self.subs_of[b]
        same = subs_a is subs_b
        overall = self.overall
        if overall:
            move_ok = self.total[a] > self.total[b]
        else:
            count_a, count_b = self.count[a], self.count[b]
        for key, A in self.held[a].items():
            self.work += 1
            if not A or (not overall and key not in subs_b):
                continue
            # A single move of one of a's partitions.
            if move_ok if overall else count_a[key] > count_b.get(key, 0):
                k = bisect_left(A, gap, key=_twice)  # items below gap / 2
                for j in nearest_first(k, len(A), 1 if same else 8):
                    item = A[j]
                    x = item[0]
                    if 0 < x < gap and (same or self.topic_of[item[1]] in subs_b):
                        g = min(x, gap - x)
                        if g > best_gain:
                            best_gain, best = g, (b, key, item, None)
                if best_gain >= perfect:
                    return best_gain, best
            # A swap with one of b's partitions.
            B = held_b.get(key)
            if B:
                self.work += min(len(A), len(B), _SWAP_SAMPLE)
                g, pair = best_pair(A, B, gap, None if same else (subs_a, subs_b, self.topic_of))
                if g > best_gain:
                    best_gain, best = g, (b, key, pair[0], pair[1])
                    if best_gain >= perfect:
                        return best_gain, best
        if best is None:
            return None
        return best_gain, best


def _twice(item: tuple[int, int]) -> int:
    """An item's lag, doubled (compared with a gap: exact halves)."""
    return 2 * item[0]


def nearest_first(k: int, n: int, width: int = 8) -> list[int]:
    """Indices k-1, k, k-2, k+1, ... within [0, n), at most ``width`` each side."""
    out = []
    for step in range(width):
        if 0 <= k - 1 - step < n:
            out.append(k - 1 - step)
        if 0 <= k + step < n:
            out.append(k + step)
    return out


def best_pair(
    A: list[tuple[int, int]],
    B: list[tuple[int, int]],
    gap: int,
    subs: tuple[frozenset[str], frozenset[str], list[str]] | None,
) -> tuple[int, Any]:
    """x in A, y in B with d = x - y in (0, gap) closest to gap / 2; a bounded sample of the
    shorter list is scanned, each element bisected into the longer. ``subs`` (a's, b's topics):
    x's topic must be one b subscribes to and y's one a subscribes to (topics by item index)."""
    perfect = gap // 2
    best_g = 0
    best: Any = None
    flip = len(B) > len(A)
    short, long_ = (A, B) if flip else (B, A)
    step = max(1, len(short) // _SWAP_SAMPLE)
    for j in range(0, len(short), step):
        e = short[j]
        target = 2 * e[0] - gap if flip else 2 * e[0] + gap  # e's lag -/+ gap / 2, doubled
        k = bisect_left(long_, target, key=_twice)
        for kk in (k - 1, k, k - 2, k + 1):
            if 0 <= kk < len(long_):
                x, y = (e, long_[kk]) if flip else (long_[kk], e)
                d = x[0] - y[0]
                if 0 < d < gap:
                    if subs is not None and (subs[2][x[1]] not in subs[1] or subs[2][y[1]] not in subs[0]):
                        continue
                    g = min(d, gap - d)
                    if g > best_g:
                        best_g, best = g, (x, y)
        if best_g >= perfect:
            break
    return best_g, best


class LeastLagPools:
    """Least-(lag, member) selection over eligible sets whose members' lags change.

    One heap of ``(lag, member, version)`` per distinct eligible set; a member whose lag changes
    gets a new version and a fresh entry in each of its sets' heaps (stale entries are dropped
    when they surface), as in :class:`Balancer`.
    """

    def __init__(self, n: int, subs: dict[str, tuple[int, ...]], load: list[int]) -> None:
        self.load = load
        self.version = [0] * n
        self.heaps: dict[int, list[tuple[int, int, int]]] = {}
        self.sets: dict[int, tuple[int, ...]] = {}
        self.of: list[list[list[tuple[int, int, int]]]] = [[] for _ in range(n)]
        for s in subs.values():
            if id(s) not in self.heaps:
                heap = sorted((load[i], i, 0) for i in s)
                self.heaps[id(s)] = heap
                self.sets[id(s)] = s
                for i in s:
                    self.of[i].append(heap)

        self.pushed = 0
        self.capacity = sum(len(s) for s in self.sets.values()) + 1024

    def _compact(self) -> None:
        """Once the entries pushed since the last compaction outnumber all members of all sets
        (amortised O(1) per push), rebuild every heap from its members' current entries, so
        refreshes over many topics do not pile up stale entries. Only called between topics, when
        no member is taken out of a heap."""
        if self.pushed <= self.capacity:
            return
        self.pushed = 0
        version, load = self.version, self.load
        for key, heap in self.heaps.items():
            heap[:] = [(load[i], i, version[i]) for i in self.sets[key]]
            heapify(heap)

    def take(self, s: tuple[int, ...], m: int) -> list[int]:
        """Remove and return the ``m`` members of ``s`` with the least (lag, member id)."""
        heap = self.heaps[id(s)]
        version = self.version
        out: list[int] = []
        while len(out) < m:
            _, i, v = heappop(heap)
            if version[i] == v:
                out.append(i)
        return out

    def refresh(self, s: tuple[int, ...]) -> None:
        """New entries for every member of ``s`` (their loads changed outside the pools)."""
        version, load = self.version, self.load
        for i in s:
            v = version[i] + 1
            version[i] = v
            entry = (load[i], i, v)
            for h in self.of[i]:
                heappush(h, entry)
            self.pushed += len(self.of[i])
        self._compact()

    def put(self, i: int, heap_of_s: tuple[int, ...], changed: bool) -> None:
        """Return member ``i`` (taken from ``s``) with its current lag."""
        if changed:
            v = self.version[i] + 1
            self.version[i] = v
            entry = (self.load[i], i, v)
            for h in self.of[i]:
                heappush(h, entry)
            self.pushed += len(self.of[i])
        else:
            heappush(self.heaps[id(heap_of_s)], (self.load[i], i, self.version[i]))


def carry_lag(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, list[int]],
    skew: int,
    load: list[int] | None = None,
    preset: dict[str, list[int]] | None = None,
) -> dict[str, list[int]]:
    """``lag_aware._carry_lag`` in Python (``_core.greedy_carry_lag``'s loops)."""
    load = load if load is not None else [0] * n_members
    owners: dict[str, list[int]] = {}
    pools = LeastLagPools(n_members, subs, load) if skew == 0 else None
    for topic in _topic_order(subs, partitions_per_topic, arrays):
        if pools is not None:
            pools._compact()
        s = subs[topic]
        n = partitions_per_topic[topic]
        k = len(s)
        tl = arrays.get(topic)
        fixed = preset.get(topic) if preset else None
        if fixed is not None or skew:
            owners[topic] = carry_lag_topic(s, n, tl, load, skew, fixed, pools)
            continue
        assert pools is not None
        if tl is None:
            # No lag in this topic: loads do not change, so every round deals to the same members
            # in (load, member id) order (a stable sort of the ascending ``s``).
            if n < k:
                first = pools.take(s, n)
                for i in first:
                    pools.put(i, s, False)
            else:
                first = sorted(s, key=load.__getitem__)
            owners[topic] = (first * (n // k + 1))[:n]
            continue
        order = _lag_order(tl)
        own = [0] * n
        if n < k:
            # One partial round: the n subscribers with the least (load, member id).
            picked = pools.take(s, n)
            for p, i in zip(order, picked):
                own[p] = i
                x = tl[p]
                if x:
                    load[i] += x
                pools.put(i, s, x != 0)
        else:
            # Full rounds: every subscriber gets one partition per round, the round's partitions
            # (lag descending) going to the members by (load, member id) at the round's start
            # (a stable sort of the ascending ``s``); then a partial round of the remainder.
            key = load.__getitem__
            full = n - n % k
            for pos in range(0, full + (n > full), k):
                ranked = sorted(s, key=key)
                for p, i in zip(order[pos : pos + k], ranked):
                    own[p] = i
                    load[i] += tl[p]
            pools.refresh(s)
        owners[topic] = own
    return owners


def carry_lag_topic(
    s: tuple[int, ...],
    n: int,
    tl: list[int] | None,
    load: list[int],
    skew: int,
    fixed: list[int] | None,
    pools: LeastLagPools | None,
) -> list[int]:
    """One topic of the proposal's rule from arbitrary starting counts (``fixed`` owners, -1 =
    free) or with ``max_skew``: a :class:`Balancer` over the topic's subscribers. Updates ``load``
    (and the entries of ``pools``, when given)."""
    k = len(s)
    own = list(fixed) if fixed is not None else [-1] * n
    counts = [0] * k
    if fixed is not None:
        pos_of = {i: j for j, i in enumerate(s)}
        for i in own:
            if i >= 0:
                counts[pos_of[i]] += 1
    free = [p for p in (_lag_order(tl) if tl is not None else range(n)) if own[p] < 0]
    if not free:
        return own
    bal = Balancer(k, lags=[load[i] for i in s], counts=counts)
    pool = bal.pool(tuple(range(k)))
    for p in free:
        j = bal.pick(pool, skew)
        x = tl[p] if tl is not None else 0
        bal.place(j, x)
        own[p] = s[j]
    for j, i in enumerate(s):
        load[i] = bal.lag[j]
    if pools is not None:
        pools.refresh(s)
    return own


def deal_global(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, list[int]],
    skew: int = 0,
) -> dict[str, list[int]]:
    """``_greedy.deal_global`` in Python (``_core.greedy_deal``'s loop with ``skew == 0``)."""
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
    eligible = [subs[t] for t in topics]
    if skew == 0 and len({id(e) for e in eligible}) == 1:
        # One eligible set (equal subscriptions): a plain heap of (count, lag, member).
        heap = [(0, 0, i) for i in eligible[0]]  # ascending, so already a heap
        for g in order:
            c, lag, j = heap[0]
            heapreplace(heap, (c + 1, lag + lag_of[g], j))
            owner_of[g] = j
    else:
        bal = Balancer(n_members)
        pools = [bal.pool(e) for e in eligible]
        pick = bal.pick
        place = bal.place
        for g in order:
            j = pick(pools[topic_of[g]], skew)
            place(j, lag_of[g])
            owner_of[g] = j
    return {t: owner_of[starts[r] : starts[r] + sizes[r]] for r, t in enumerate(topics)}


# -- max_skew and the prototype rule (before _core.greedy_deal/greedy_carry_lag took skew) ----------


class Pool:
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
        self._pools_of: list[list[Pool]] = [[] for _ in range(n)]
        self._pools: dict[int, Pool] = {}
        self._keep: list[tuple[int, ...]] = []
        self._max_count = max(self.count, default=0)

    def pool(self, members: tuple[int, ...]) -> Pool:
        """The pool of an eligible set (a non-empty tuple of member indices), interned by identity
        (pass the same tuple object for the same set, as :func:`subscribers_by_topic` returns).

        Must be called for every eligible set before the first :meth:`place`.
        """
        key = id(members)
        p = self._pools.get(key)
        if p is None:
            if not members:
                raise ValueError("an eligible set must not be empty")
            p = Pool(members, self.count, self.lag)
            self._pools[key] = p
            self._keep.append(members)  # keeps ``id(members)`` unique while this Balancer lives
            for i in members:
                self._pools_of[i].append(p)
        return p

    def pick(self, pool: Pool, skew: int = 0) -> int:
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


def per_topic(
    subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int], arrays: dict[str, list[int]], skew: int
) -> dict[str, list[int]]:
    """``lag_aware._per_topic`` in Python (``_core.greedy_per_topic``'s loop)."""
    owners: dict[str, list[int]] = {}
    for topic, s in subs.items():
        n = partitions_per_topic[topic]
        k = len(s)
        tl = arrays.get(topic)
        if tl is None:
            # All lags equal: every rule reduces to (count, member id), i.e. a round-robin deal.
            owners[topic] = list(s * (n // k + 1))[:n]
            continue
        order = _lag_order(tl)
        own = [0] * n
        # First round: every subscriber is at (0 partitions, lag 0), so the j-th partition goes to
        # the j-th member by id whatever the rule (a fresh member's lag 0 is never beaten).
        for j in range(min(n, k)):
            own[order[j]] = s[j]
        if n > k:
            if skew == 0:
                heap = [(1, tl[order[j]], j) for j in range(k)]
                heapify(heap)
                for p in order[k:]:
                    c, total, j = heap[0]
                    heapreplace(heap, (c + 1, total + tl[p], j))
                    own[p] = s[j]
            else:
                bal = Balancer(k, count=1, lags=[tl[order[j]] for j in range(k)])
                pool = bal.pool(tuple(range(k)))
                for p in order[k:]:
                    j = bal.pick(pool, skew)
                    bal.place(j, tl[p])
                    own[p] = s[j]
        owners[topic] = own
    return owners


def _hottest_first(tl: list[int] | None) -> Any:
    """Sort key: lag descending (when the topic has lag), then partition ascending."""
    if tl is None:
        return None
    return lambda p: (-tl[p], p)


def sticky(
    inputs: Inputs,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, list[int]],
    skew: int,
    mode: str,
) -> tuple[dict[str, list[int]], int, dict[str, list[bool]]]:
    """``lag_aware._sticky`` in Python (``_core.greedy_keep``'s and ``_core.greedy_per_topic``'s
    loops): keep owned partitions within the per-topic quota, place the rest by the mode's rule.
    Returns (owners, kept, frozen: topic -> per-partition 'kept' flags)."""
    ids = inputs.ids
    by_topic = inputs.read_previous()
    preset: dict[str, list[int]] = {}
    frozen: dict[str, list[bool]] = {}
    load = [0] * len(ids)
    kept = 0
    member_sets: dict[int, set[int]] = {}  # set(s) per eligible set (topics share them)
    for t, owned in by_topic.items():
        s = subs[t]
        members_of_t = member_sets.get(id(s))
        if members_of_t is None:
            members_of_t = member_sets[id(s)] = set(s)
        n = partitions_per_topic[t]
        q, r = divmod(n, len(s))
        tl = arrays.get(t)
        # claims by partitions owned (descending), then member index
        claims = sorted([(-len(ps), i) for i, ps in owned.items() if i in members_of_t])
        own = [-1] * n
        flags = [False] * n
        for neg_c, i in claims:
            c = -neg_c
            quota = q
            if c > q and r > 0:
                quota = q + 1
                r -= 1
            ps = owned[i]
            if len(ps) > quota:
                # Keep the hottest (ties: lower partition).
                ps = sorted(ps, key=_hottest_first(tl))[:quota]
            for p in ps:
                own[p] = i
                flags[p] = True
                if tl is not None:
                    load[i] += tl[p]
            kept += len(ps)
        preset[t] = own
        frozen[t] = flags
    if mode == "per-topic":
        # The prototype's rule with the kept partitions in place: every topic starts from zero lag.
        owners = {}
        for t, s in subs.items():
            fixed = preset.get(t)
            if fixed is None:
                owners.update(per_topic({t: s}, partitions_per_topic, arrays, skew))
            else:
                topic_load = [0] * len(ids)
                tl = arrays.get(t)
                if tl is not None:
                    for p, i in enumerate(fixed):
                        if i >= 0:
                            topic_load[i] += tl[p]
                owners[t] = carry_lag_topic(s, partitions_per_topic[t], tl, topic_load, skew, fixed, None)
        return owners, kept, frozen
    owners = carry_lag(len(ids), subs, partitions_per_topic, arrays, skew, load=load, preset=preset)
    return owners, kept, frozen


def subscribers_by_topic(
    sorted_ids: Sequence[str], topics_of: Sequence[Sequence[str]], partitions_per_topic: dict[str, int]
) -> dict[str, tuple[int, ...]]:
    """topic -> indices of its subscribers (ascending), for topics with metadata and >= 1 partition.

    Topics a member subscribes to that are missing from ``partitions_per_topic`` have no metadata
    and are skipped, as are topics with 0 partitions. Topics with the same subscribers share one
    tuple object (so callers can intern eligible sets by identity). Members with equal
    subscriptions are handled together: the work is per distinct subscription, not per member.
    (``_greedy.subscribers_by_topic`` as it was in Python; ``_core.subscribers_by_topic`` replaced
    it.)
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
