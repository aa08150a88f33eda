"""Pure-Python reference of kassign's sticky engine (``sticky`` and ``cooperative-sticky``).

This is the readable statement of the algorithm that ``rust/core/src/sticky/`` implements; the two
must return identical assignments for identical input (tests compare them on random groups).
Every tie is broken by member index (members sorted by id) or flat partition id (partitions
sorted by (topic, partition)), never by hash order.

1. **Ownership.** Each member's owned partitions of subscribed, existing topics are its claims.
   Per partition the highest generation wins; equal top generations invalidate the claim for all;
   a lone claim wins whatever its generation. Claims of unsubscribed topics do not compete, but
   still count as "the member holds it" for cooperative withholding.
2. **Constrained path** (every member's raw topic set is equal, Java's test): quotas
   q = P div N and q + 1 for r = P mod N members. Each member keeps its claims up to q, or q + 1
   while extra slots remain (members in index order), keeping in (partition, topic) order
   (rack-local claims first when rack logic applies). The pool, in (topic, partition) order, is
   dealt round-robin over members below q (in index order; one reaching q joins the tail of the
   exactly-q queue), then one each to the exactly-q queue while extra slots remain. A fresh
   group is therefore dealt round-robin over members sorted by id, as Java does. With racks, a
   rack-matching pass (scarcest partitions first, least-loaded matching member) runs first.
3. **General path** (heterogeneous subscriptions). Topics with the same subscribers form a class.
   (A) an optimal load vector: water-filling class by class (fewest subscribers first), then
   cost-reducing paths are removed with a reverse breadth-first search from the lightest members,
   pushing units along the found path until none is left (no chain of moves can lower a member by
   one and raise another that is at least two lighter). (B) the levels of the optimum (members
   reachable from the heaviest by moves, all at beta or beta - 1) fix the set of all optimal load
   vectors; a min-cost flow (keep = 0, new = 1) over class -> member -> level -> sink, started
   from "keep as much as possible" plus a greedy fill and finished with successive shortest paths,
   keeps the most owned partitions among all optimal load vectors. (C) concrete partitions: each
   member keeps its chosen number of claims per class in (partition, topic) order; the rest of
   each class is dealt round-robin in (topic, partition) order to members with new-partition room
   (rack-matching pass first when rack logic applies).
4. **Cooperative**: a partition given to a member that does not validly keep it is withheld
   (left unassigned this round) when any other member of the group lists it as owned.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable

from ._problem import Problem

NONE = -1
TIE = -2


# --------------------------------------------------------------------------------------------
# Ownership
# --------------------------------------------------------------------------------------------


class Claims:
    """Resolved claims: ``win[p]`` = member that keeps claim to p (or NONE/TIE); raw holders for
    cooperative withholding."""

    __slots__ = ("raw_first", "raw_multi", "win")

    def __init__(self, prob: Problem) -> None:
        n = prob.num_partitions
        win = [NONE] * n
        win_gen = [0] * n
        raw_first = [NONE] * n
        raw_multi = bytearray(n)
        for i, owned in enumerate(prob.owned):
            subs = set(prob.subs[i])
            g = prob.generation[i]
            for p in owned:
                if raw_first[p] == NONE:
                    raw_first[p] = i
                else:
                    raw_multi[p] = 1
                if prob.topic_of(p) not in subs:
                    continue
                w = win[p]
                if w == NONE or g > win_gen[p]:
                    win[p] = i
                    win_gen[p] = g
                elif g == win_gen[p]:
                    win[p] = TIE
        self.win = win
        self.raw_first = raw_first
        self.raw_multi = raw_multi

    def held_by_other(self, p: int, m: int) -> bool:
        """Whether a member other than ``m`` lists ``p`` as owned."""
        f = self.raw_first[p]
        return f != NONE and (self.raw_multi[p] == 1 or f != m)


class Placer:
    """The owner array being built, with cooperative withholding applied on new placements."""

    __slots__ = ("claims", "cooperative", "count", "owner")

    def __init__(self, prob: Problem, claims: Claims, cooperative: bool) -> None:
        self.owner = [NONE] * prob.num_partitions
        self.count = [0] * len(prob.ids)
        self.claims = claims
        self.cooperative = cooperative

    def keep(self, m: int, p: int) -> None:
        self.owner[p] = m
        self.count[m] += 1

    def give(self, m: int, p: int) -> None:
        """A partition m did not validly own: withheld when someone else still holds it."""
        self.count[m] += 1
        if self.cooperative and self.claims.held_by_other(p, m):
            return
        self.owner[p] = m


def keep_order(prob: Problem, m: int, parts: list[int], rack_on: bool) -> list[int]:
    """Claims in the order they are kept: rack-local first (when rack logic applies), then
    (partition index, topic) -- Java's order, which interleaves topics."""
    base = prob.topic_base
    rack = prob.rack[m]

    def key(p: int) -> tuple[int, int, int]:
        t = prob.topic_of(p)
        mismatch = 0
        if rack_on:
            pr = prob.partition_racks[p]  # type: ignore[index]
            mismatch = 0 if (rack is not None and rack in pr) else 1
        return (mismatch, p - base[t], t)

    return sorted(parts, key=key)


def rack_pass(
    prob: Problem,
    pool: list[int],
    eligible: list[int],
    room: Callable[[int], int | None],
    take: Callable[[int, int], None],
    placed: bytearray,
) -> None:
    """Give pool partitions to members on a rack that hosts a replica, scarcest partitions first
    (fewest replica racks, then flat id); each to the matching member with the least
    ``room``-key (count, index). ``room(m)`` returns the member's current key or None when it
    can take no more; ``take(m, p)`` places p on m."""
    prs = prob.partition_racks
    assert prs is not None
    heaps: dict[str, list[tuple[int, int]]] = {}
    for m in eligible:
        r = prob.rack[m]
        k = room(m)
        if r is not None and k is not None:
            heaps.setdefault(r, []).append((k, m))
    for heap in heaps.values():
        heapq.heapify(heap)
    order = sorted((p for p in pool if prs[p]), key=lambda p: (len(prs[p]), p))
    for p in order:
        best: tuple[int, int] | None = None
        for r in prs[p]:
            h = heaps.get(r)
            while h:
                k, m = h[0]
                cur = room(m)
                if cur is None:
                    heapq.heappop(h)
                elif cur != k:
                    heapq.heapreplace(h, (cur, m))
                else:
                    break
            if h and (best is None or h[0] < best):
                best = h[0]
        if best is None:
            continue
        m = best[1]
        take(m, p)
        placed[p] = 1
        # m's heap entry is now stale (keys only grow); it is fixed lazily when it surfaces


# --------------------------------------------------------------------------------------------
# Constrained path
# --------------------------------------------------------------------------------------------


def constrained(prob: Problem, claims: Claims, cooperative: bool) -> list[int]:
    n_members = len(prob.ids)
    place = Placer(prob, claims, cooperative)
    if n_members == 0:
        return place.owner
    parts = [p for t in prob.subs[0] for p in range(prob.topic_base[t], prob.topic_base[t + 1])]
    parts.sort()
    q, extra = divmod(len(parts), n_members)
    rack_on = prob.rack_aware()
    win = claims.win
    for m in range(n_members):
        mine = [p for p in prob.owned[m] if win[p] == m]
        if len(mine) > q:
            mine = keep_order(prob, m, mine, rack_on)
            if extra > 0:
                extra -= 1
                mine = mine[: q + 1]
            else:
                mine = mine[:q]
        for p in mine:
            place.keep(m, p)
    count = place.count
    pool = [p for p in parts if place.owner[p] == NONE]
    placed = bytearray(prob.num_partitions)
    if rack_on and pool:
        state = {"extra": extra}

        def room(m: int) -> int | None:
            c = count[m]
            if c < q or (c == q and state["extra"] > 0):
                return c
            return None

        def take(m: int, p: int) -> None:
            if count[m] == q:
                state["extra"] -= 1
            place.give(m, p)

        rack_pass(prob, pool, list(range(n_members)), room, take, placed)
        pool = [p for p in pool if not placed[p]]
    under = [m for m in range(n_members) if count[m] < q]
    exact = deque(m for m in range(n_members) if count[m] == q)
    it = iter(pool)
    while under:
        nxt = []
        for m in under:
            place.give(m, next(it))
            if count[m] < q:
                nxt.append(m)
            else:
                exact.append(m)
        under = nxt
    for p in it:
        place.give(exact.popleft(), p)
    return place.owner


# --------------------------------------------------------------------------------------------
# General path
# --------------------------------------------------------------------------------------------


class Classes:
    """Topic classes (topics with the same subscriber set) and their class -> member edges."""

    __slots__ = ("edge_class", "edge_member", "incidence", "order", "size", "start", "topics")

    def __init__(self, prob: Problem) -> None:
        subscribers: list[list[int]] = [[] for _ in prob.topics]
        for m, subs in enumerate(prob.subs):
            for t in subs:
                subscribers[t].append(m)
        key_to_class: dict[tuple[int, ...], int] = {}
        self.topics: list[list[int]] = []
        members_of: list[tuple[int, ...]] = []
        for t, subs in enumerate(subscribers):
            if not subs or prob.topic_len[t] == 0:
                continue
            key = tuple(subs)
            c = key_to_class.get(key)
            if c is None:
                c = len(self.topics)
                key_to_class[key] = c
                self.topics.append([])
                members_of.append(key)
            self.topics[c].append(t)
        self.size = [sum(prob.topic_len[t] for t in ts) for ts in self.topics]
        self.start = [0]
        self.edge_member: list[int] = []
        self.edge_class: list[int] = []
        self.incidence: list[list[tuple[int, int]]] = [[] for _ in prob.ids]
        for c, mem in enumerate(members_of):
            for m in mem:
                e = len(self.edge_member)
                self.edge_member.append(m)
                self.edge_class.append(c)
                self.incidence[m].append((c, e))
            self.start.append(len(self.edge_member))
        # The order classes are filled in: fewest subscribers first, then class id.
        self.order = sorted(range(len(self.topics)), key=lambda c: (self.start[c + 1] - self.start[c], c))

    def edges(self, c: int) -> range:
        return range(self.start[c], self.start[c + 1])


def water_fill(cls: Classes, c: int, load: list[int], x: list[int]) -> None:
    """Spread class c's partitions over its subscribers, raising the lowest loads first."""
    edges = cls.edges(c)
    units = cls.size[c]
    ms = [cls.edge_member[e] for e in edges]
    lo = min(load[m] for m in ms)
    hi = lo + units
    # largest level with sum(max(0, level - load)) <= units
    while lo < hi:
        mid = (lo + hi + 1) // 2
        need = sum(mid - load[m] for m in ms if load[m] < mid)
        if need <= units:
            lo = mid
        else:
            hi = mid - 1
    level = lo
    for e in edges:
        m = cls.edge_member[e]
        if load[m] < level:
            d = level - load[m]
            x[e] += d
            load[m] += d
            units -= d
    for e in edges:
        if units == 0:
            break
        m = cls.edge_member[e]
        if load[m] == level:
            x[e] += 1
            load[m] += 1
            units -= 1


def balance(cls: Classes, load: list[int], x: list[int]) -> None:
    """Remove every cost-reducing path: repeat a reverse BFS from the lightest members (each
    member's root is the lightest member it can pass a unit to through a chain of moves) and
    push units from each member at least two heavier than its root along the found chain."""
    n_members = len(load)
    n_classes = len(cls.topics)
    em, ec, inc = cls.edge_member, cls.edge_class, cls.incidence
    while True:
        seen_m = bytearray(n_members)
        seen_c = bytearray(n_classes)
        root = [NONE] * n_members
        via_m = [NONE] * n_members  # edge (c, m): m holds units of c
        via_c = [NONE] * n_classes  # edge (c, w): c was reached from subscriber w
        for v in sorted(range(n_members), key=lambda m: (load[m], m)):
            if seen_m[v]:
                continue
            seen_m[v] = 1
            root[v] = v
            queue = [v]
            for w in queue:
                for c, e in inc[w]:
                    if seen_c[c]:
                        continue
                    seen_c[c] = 1
                    via_c[c] = e
                    for e2 in cls.edges(c):
                        u = em[e2]
                        if x[e2] > 0 and not seen_m[u]:
                            seen_m[u] = 1
                            root[u] = v
                            via_m[u] = e2
                            queue.append(u)
        improved = False
        for u in sorted(range(n_members), key=lambda m: (-load[m], m)):
            r = root[u]
            if load[u] - load[r] < 2:
                continue
            bottleneck = load[u]
            w = u
            while w != r:
                e = via_m[w]
                bottleneck = min(bottleneck, x[e])
                w = em[via_c[ec[e]]]
            delta = min(bottleneck, (load[u] - load[r]) // 2)
            if delta <= 0:
                continue
            w = u
            while w != r:
                e = via_m[w]
                to = via_c[ec[e]]
                x[e] -= delta
                x[to] += delta
                w = em[to]
            load[u] -= delta
            load[r] += delta
            improved = True
        if not improved:
            return


def levels(cls: Classes, load: list[int], x: list[int]) -> tuple[list[int], list[int], list[int], list[int]]:
    """The levels of an optimal load vector: repeatedly, the members reachable by moves from all
    remaining members of the largest remaining load beta. Every optimal load vector gives each
    member of such a level beta or beta - 1, with the same number at beta.

    Returns (level of member, lo, hi, number of members at hi per level)."""
    n_members = len(load)
    em, inc = cls.edge_member, cls.incidence
    level = [NONE] * n_members
    lo = [0] * n_members
    hi = [0] * n_members
    at_hi: list[int] = []
    order = sorted(range(n_members), key=lambda m: (-load[m], m))
    k = 0
    while k < n_members:
        if level[order[k]] != NONE:
            k += 1
            continue
        beta = load[order[k]]
        lv = len(at_hi)
        queue = []
        j = k
        while j < n_members and load[order[j]] == beta:
            m = order[j]
            if level[m] == NONE:
                level[m] = lv
                queue.append(m)
            j += 1
        seen_c: set[int] = set()
        for w in queue:
            for c, e in inc[w]:
                if x[e] == 0 or c in seen_c:
                    continue
                seen_c.add(c)
                for e2 in cls.edges(c):
                    v = em[e2]
                    if level[v] == NONE:
                        level[v] = lv
                        queue.append(v)
        top = 0
        for m in queue:
            if beta == 0:
                lo[m] = hi[m] = 0
            else:
                lo[m], hi[m] = beta - 1, beta
                if load[m] == beta:
                    top += 1
        at_hi.append(top)
    return level, lo, hi, at_hi


class Flow:
    """Phase B: keep/new counts per (class, member) edge with member ranges [lo, hi] and per-level
    counts of members at hi; maximises kept partitions by min-cost flow."""

    def __init__(
        self,
        cls: Classes,
        owned_per_edge: list[int],
        level: list[int],
        lo: list[int],
        hi: list[int],
        at_hi: list[int],
    ) -> None:
        self.cls = cls
        self.h = owned_per_edge
        n_edges = len(cls.edge_member)
        n_members = len(lo)
        self.k = [0] * n_edges
        self.y = [0] * n_edges
        self.used = [0] * n_members
        self.level, self.lo, self.hi = level, lo, hi
        self.free_hi = list(at_hi)
        self.supply = list(cls.size)
        # the order a member keeps / gives up classes: harder-to-place classes first
        rank = [0] * len(cls.topics)
        for i, c in enumerate(cls.order):
            rank[c] = i
        self.member_edges = [sorted(inc, key=lambda ce: rank[ce[0]]) for inc in cls.incidence]

    def _add(self, m: int, d: int) -> None:
        before = self.used[m]
        self.used[m] = before + d
        lo = self.lo[m]
        if before <= lo < before + d:
            self.free_hi[self.level[m]] -= 1
        elif before + d <= lo < before:
            self.free_hi[self.level[m]] += 1

    def room(self, m: int) -> int:
        u, lo = self.used[m], self.lo[m]
        if u < lo:
            return lo - u
        if u == lo and self.hi[m] > lo and self.free_hi[self.level[m]] > 0:
            return 1
        return 0

    def run(self) -> None:
        cls = self.cls
        n_members = len(self.used)
        # 1. keep as much as possible: up to lo for everyone, then the hi slots of each level to
        # members (in index order) that still have claims to keep.
        for m in range(n_members):
            budget = self.lo[m]
            for c, e in self.member_edges[m]:
                d = min(self.h[e], budget)
                if d:
                    self.k[e] += d
                    self.supply[c] -= d
                    budget -= d
                    self._add(m, d)
        for m in range(n_members):
            if self.room(m) and self.used[m] == self.lo[m]:
                for c, e in self.member_edges[m]:
                    if self.k[e] < self.h[e]:
                        self.k[e] += 1
                        self.supply[c] -= 1
                        self._add(m, 1)
                        break
        # 2. greedy fill with new partitions
        for c in cls.order:
            for e in cls.edges(c):
                if not self.supply[c]:
                    break
                m = cls.edge_member[e]
                d = min(self.room(m), self.supply[c])
                while d:
                    self.y[e] += d
                    self.supply[c] -= d
                    self._add(m, d)
                    d = min(self.room(m), self.supply[c])
        # 3. successive shortest paths for whatever is left
        while any(self.supply):
            self._augment()

    def _augment(self) -> None:
        """One shortest augmenting path (Bellman-Ford, queue-based) from a class with supply to a
        member or level with room. Nodes: classes, then members, then levels."""
        cls = self.cls
        n_c = len(cls.topics)
        n_m = len(self.used)
        n_l = len(self.free_hi)
        INF = float("inf")
        dist = [INF] * (n_c + n_m + n_l)
        # node => (previous node, the edge step taken from it) on the cheapest path found
        prev: list[tuple[int, tuple[str, int]] | None] = [None] * (n_c + n_m + n_l)
        in_q = bytearray(n_c + n_m + n_l)
        q: deque[int] = deque()
        for c in range(n_c):
            if self.supply[c] > 0:
                dist[c] = 0
                q.append(c)
                in_q[c] = 1
        members_of_level: list[list[int]] = [[] for _ in range(n_l)]
        for m in range(n_m):
            members_of_level[self.level[m]].append(m)
        relaxations = 0
        limit = (n_c + n_m + n_l + 1) * (len(cls.edge_member) + n_m + 1) + 10
        while q:
            v = q.popleft()
            in_q[v] = 0
            relaxations += 1
            if relaxations > limit:
                raise RuntimeError("sticky: negative cycle in the stickiness flow (internal error)")
            d = dist[v]
            out = []
            if v < n_c:
                for e in cls.edges(v):
                    m = cls.edge_member[e]
                    if self.k[e] < self.h[e]:
                        out.append((n_c + m, 0, ("keep+", e)))
                    else:
                        out.append((n_c + m, 1, ("new+", e)))
            elif v < n_c + n_m:
                m = v - n_c
                for c, e in cls.incidence[m]:
                    if self.y[e] > 0:
                        out.append((c, -1, ("new-", e)))
                    elif self.k[e] > 0:
                        out.append((c, 0, ("keep-", e)))
                if self.used[m] == self.lo[m] and self.hi[m] > self.lo[m]:
                    out.append((n_c + n_m + self.level[m], 0, ("slot+", m)))
            else:
                lv = v - n_c - n_m
                for m in members_of_level[lv]:
                    if self.used[m] == self.hi[m] and self.hi[m] > self.lo[m]:
                        out.append((n_c + m, 0, ("slot-", m)))
            for w, cost, how in out:
                if d + cost < dist[w]:
                    dist[w] = d + cost
                    prev[w] = (v, how)
                    if not in_q[w]:
                        in_q[w] = 1
                        q.append(w)
        # the cheapest sink: a member below lo, or a level with a free hi slot
        best, best_d = NONE, INF
        for m in range(n_m):
            if self.used[m] < self.lo[m] and dist[n_c + m] < best_d:
                best, best_d = n_c + m, dist[n_c + m]
        for lv in range(n_l):
            if self.free_hi[lv] > 0 and dist[n_c + n_m + lv] < best_d:
                best, best_d = n_c + n_m + lv, dist[n_c + n_m + lv]
        if best == NONE:
            raise RuntimeError("sticky: no feasible placement for the optimal load vector (internal error)")
        # walk back, one unit (slot moves carry one unit; keeps the walk simple and exact)
        path = []
        v = best
        step = prev[v]
        while step is not None:
            u, how = step
            path.append(how)
            v = u
            step = prev[v]
        source = v
        for kind, e in path:
            if kind == "keep+":
                self.k[e] += 1
                self._add(cls.edge_member[e], 1)
            elif kind == "new+":
                self.y[e] += 1
                self._add(cls.edge_member[e], 1)
            elif kind == "new-":
                self.y[e] -= 1
                self._add(cls.edge_member[e], -1)
            elif kind == "keep-":
                self.k[e] -= 1
                self._add(cls.edge_member[e], -1)
            # slot+/slot-: the member's own count changes through its class edges; nothing here
        self.supply[source] -= 1


def general(prob: Problem, claims: Claims, cooperative: bool) -> list[int]:
    n_members = len(prob.ids)
    cls = Classes(prob)
    place = Placer(prob, claims, cooperative)
    if not cls.topics:
        return place.owner
    class_of_topic = [NONE] * len(prob.topics)
    for c, ts in enumerate(cls.topics):
        for t in ts:
            class_of_topic[t] = c
    # A. an optimal load vector
    load = [0] * n_members
    x = [0] * len(cls.edge_member)
    for c in cls.order:
        water_fill(cls, c, load, x)
    balance(cls, load, x)
    # B. the most kept partitions among all optimal load vectors
    level, lo, hi, at_hi = levels(cls, load, x)
    win = claims.win
    mine: list[dict[int, list[int]]] = [{} for _ in range(n_members)]
    for m in range(n_members):
        for p in prob.owned[m]:
            if win[p] == m:
                mine[m].setdefault(class_of_topic[prob.topic_of(p)], []).append(p)
    h = [0] * len(cls.edge_member)
    for m in range(n_members):
        for c, e in cls.incidence[m]:
            h[e] = len(mine[m].get(c, ()))
    flow = Flow(cls, h, level, lo, hi, at_hi)
    flow.run()
    # C. concrete partitions
    rack_on = prob.rack_aware()
    for m in range(n_members):
        for c, e in cls.incidence[m]:
            if flow.k[e]:
                for p in keep_order(prob, m, mine[m][c], rack_on)[: flow.k[e]]:
                    place.keep(m, p)
    placed = bytearray(prob.num_partitions)
    for c in range(len(cls.topics)):
        pool = [
            p
            for t in cls.topics[c]
            for p in range(prob.topic_base[t], prob.topic_base[t + 1])
            if place.owner[p] == NONE
        ]
        room = {cls.edge_member[e]: flow.y[e] for e in cls.edges(c) if flow.y[e] > 0}
        if rack_on and pool:
            given = dict.fromkeys(room, 0)

            # Both closures run inside rack_pass below, during this iteration; the defaults bind
            # this class's dicts explicitly.
            def room_key(m: int, room: dict[int, int] = room, given: dict[int, int] = given) -> int | None:
                return given[m] if room[m] > 0 else None

            def take(m: int, p: int, room: dict[int, int] = room, given: dict[int, int] = given) -> None:
                room[m] -= 1
                given[m] += 1
                place.give(m, p)

            rack_pass(prob, pool, sorted(room), room_key, take, placed)
            pool = [p for p in pool if not placed[p]]
        ms = [m for m in sorted(room) if room[m] > 0]
        it = iter(pool)
        while ms:
            nxt = []
            for m in ms:
                place.give(m, next(it))
                room[m] -= 1
                if room[m]:
                    nxt.append(m)
            ms = nxt
    return place.owner


def assign(prob: Problem, cooperative: bool) -> list[int]:
    """Owner per flat partition id (NONE for unassigned or withheld)."""
    claims = Claims(prob)
    if prob.uniform():
        return constrained(prob, claims, cooperative)
    return general(prob, claims, cooperative)
