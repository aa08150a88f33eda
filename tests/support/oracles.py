"""Independent oracles for kassign assignments (docs/oracles.md).

Every check here judges a result from first principles: none of them calls kassign to compute the
expected answer. Inputs are the public API's own shapes::

    members: Mapping[str, kassign.Member]      (only .topics, .owned_partitions, .generation,
                                                .rack and .user_data are read)
    partitions_per_topic: Mapping[str, int]
    result: Mapping[str, Sequence[(topic, partition)]]

Checks raise :class:`OracleViolation` (an ``AssertionError``) with a message saying what is wrong;
helpers that compute a quantity return it. ``tests/properties/test_oracles_selftest.py`` proves that each check
rejects a hand-made bad assignment, so the oracles themselves can fail.

Ownership semantics (docs/oracles.md, Ownership; docs/java-differences.md) used by
:func:`resolve_ownership`:

1. a member's claim is dropped when its topic no longer exists (absent or 0 partitions), its index
   is out of range, or the member no longer subscribes to the topic;
2. a member listing a partition twice counts once (kassign removes duplicates first);
3. among the remaining claimants of a partition, the unique highest generation keeps it; if two or
   more claimants share the highest generation, nobody keeps it; a claimant with a lower
   generation keeps an uncontested claim.

Step 1 before step 3 ("filter first") is the reading of the ownership rules these oracles use: an
invalid claim does not contest a valid one. ``filter_first=False`` gives the other reading (resolve
conflicts among all raw claims, then drop invalid winners) for comparison.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

TP = tuple[str, int]
Result = Mapping[str, Sequence[Any]]


class OracleViolation(AssertionError):
    """An assignment broke one of the properties of docs/oracles.md."""


def _fail(msg: str) -> None:
    raise OracleViolation(msg)


# --------------------------------------------------------------------------------------------
# Basic views
# --------------------------------------------------------------------------------------------


def as_sets(result: Result) -> dict[str, set[TP]]:
    """member -> set of (topic, partition) plain tuples."""
    return {m: {(tp[0], tp[1]) for tp in tps} for m, tps in result.items()}


def loads(result: Result) -> dict[str, int]:
    return {m: len(tps) for m, tps in result.items()}


def existing_topics(partitions_per_topic: Mapping[str, int]) -> set[str]:
    """Topics that exist and have at least one partition."""
    return {t for t, n in partitions_per_topic.items() if n > 0}


def effective_subscriptions(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int]
) -> dict[str, frozenset[str]]:
    """member -> subscribed topics that exist with >= 1 partition."""
    live = existing_topics(partitions_per_topic)
    return {m: frozenset(t for t in mem.topics if t in live) for m, mem in members.items()}


def is_uniform(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int]) -> bool:
    """Every member subscribes to the same set of existing topics (an effectively uniform group)."""
    subs = set(effective_subscriptions(members, partitions_per_topic).values())
    return len(subs) <= 1


def expected_partitions(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int]) -> set[TP]:
    """Every partition of an existing topic that at least one member subscribes to."""
    subscribed = set().union(*effective_subscriptions(members, partitions_per_topic).values()) if members else set()
    return {(t, p) for t in subscribed for p in range(partitions_per_topic[t])}


def assigned_partitions(result: Result) -> set[TP]:
    return {(tp[0], tp[1]) for tps in result.values() for tp in tps}


# --------------------------------------------------------------------------------------------
# Validity and completeness
# --------------------------------------------------------------------------------------------


def check_validity(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result) -> None:
    """Every member present and nobody else; each entry a real partition of a topic the member
    subscribes to; each partition assigned at most once; each list sorted by (topic, partition)."""
    if set(result) != set(members):
        missing = sorted(set(members) - set(result))
        extra = sorted(set(result) - set(members))
        _fail(f"result members differ from input: missing {missing}, unknown {extra}")
    owner: dict[TP, str] = {}
    for m, tps in result.items():
        subs = set(members[m].topics)
        for tp in tps:
            if not (isinstance(tp, tuple) and len(tp) == 2):
                _fail(f"{m}: entry {tp!r} is not a (topic, partition) pair")
            t, p = tp[0], tp[1]
            if t not in partitions_per_topic:
                _fail(f"{m}: assigned {t}-{p} of an unknown topic")
            if not isinstance(p, int) or not 0 <= p < partitions_per_topic[t]:
                _fail(f"{m}: assigned {t}-{p} out of range (topic has {partitions_per_topic[t]})")
            if t not in subs:
                _fail(f"{m}: assigned {t}-{p} but does not subscribe to {t}")
            if (t, p) in owner:
                other = owner[(t, p)]
                _fail(f"{t}-{p} assigned twice: {other} and {m}")
            owner[(t, p)] = m
        plain = [(tp[0], tp[1]) for tp in tps]
        if plain != sorted(plain):
            _fail(f"{m}: partitions not sorted by (topic, partition): {plain}")


def missing_partitions(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result) -> set[TP]:
    return expected_partitions(members, partitions_per_topic) - assigned_partitions(result)


def check_completeness(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result) -> None:
    """Every partition of every subscribed, existing topic is assigned (assumes validity)."""
    missing = missing_partitions(members, partitions_per_topic, result)
    if missing:
        _fail(f"{len(missing)} partitions unassigned, e.g. {sorted(missing)[:5]}")


# --------------------------------------------------------------------------------------------
# Balance
# --------------------------------------------------------------------------------------------


def check_uniform_balance(result: Result, among: Iterable[str] | None = None) -> None:
    """max - min <= 1 over the members (all, or ``among``)."""
    ls = loads(result)
    vals = [ls[m] for m in (among if among is not None else ls)]
    if vals and max(vals) - min(vals) > 1:
        hi = max(ls, key=lambda m: ls[m])
        lo = min(ls, key=lambda m: ls[m])
        _fail(f"unbalanced: {hi} has {ls[hi]}, {lo} has {ls[lo]}")


def find_cost_reducing_path(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result
) -> list[str] | None:
    """A path A0 -> A1 -> ... -> Ak where each Ai holds a partition of a topic A(i+1) subscribes to
    and load(Ak) <= load(A0) - 2, or None. Such a path means moving one partition along each hop
    lowers the heaviest end and raises the lightest, i.e. the load vector is not optimal
    (Harvey, Ladner, Lovasz, Tamir: no cost-reducing path <=> optimal semi-matching)."""
    subs = effective_subscriptions(members, partitions_per_topic)
    ls = loads(result)
    held_topics = {m: {tp[0] for tp in tps} for m, tps in result.items()}
    subscribers: dict[str, list[str]] = defaultdict(list)
    for m in sorted(subs):
        for t in subs[m]:
            subscribers[t].append(m)
    succ = {m: sorted({b for t in held_topics[m] for b in subscribers.get(t, ()) if b != m}) for m in result}
    for a in sorted(result, key=lambda m: (-ls[m], m)):
        la = ls[a]
        if la < 2:
            break
        parent: dict[str, str | None] = {a: None}
        queue = deque([a])
        while queue:
            x = queue.popleft()
            for y in succ[x]:
                if y in parent:
                    continue
                parent[y] = x
                if ls[y] <= la - 2:
                    path = [y]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])  # type: ignore[arg-type]
                    return path[::-1]
                queue.append(y)
    return None


def check_optimal_balance(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result) -> None:
    """No cost-reducing path (heterogeneous optimal balance, found by BFS)."""
    path = find_cost_reducing_path(members, partitions_per_topic, result)
    if path is not None:
        ls = loads(result)
        _fail("cost-reducing path " + " -> ".join(f"{m}({ls[m]})" for m in path))


def sum_of_squares(result: Result) -> int:
    return sum(len(tps) ** 2 for tps in result.values())


# --------------------------------------------------------------------------------------------
# Ownership and stickiness
# --------------------------------------------------------------------------------------------


def _valid_claim(tp: TP, subscribed: Iterable[str], partitions_per_topic: Mapping[str, int]) -> bool:
    t, p = tp
    n = partitions_per_topic.get(t, 0)
    return t in subscribed and isinstance(p, int) and 0 <= p < n


def resolve_ownership(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], *, filter_first: bool = True
) -> dict[str, set[TP]]:
    """member -> partitions it still validly owns after conflict resolution (module docstring)."""
    claims: dict[TP, list[tuple[int, str]]] = defaultdict(list)
    for m, mem in members.items():
        subs = set(mem.topics)
        for tp in {(tp[0], tp[1]) for tp in mem.owned_partitions}:
            if filter_first and not _valid_claim(tp, subs, partitions_per_topic):
                continue
            claims[tp].append((mem.generation, m))
    owned: dict[str, set[TP]] = {m: set() for m in members}
    for tp, cl in claims.items():
        top = max(g for g, _ in cl)
        winners = [m for g, m in cl if g == top]
        if len(winners) == 1:
            m = winners[0]
            if filter_first or _valid_claim(tp, set(members[m].topics), partitions_per_topic):
                owned[m].add(tp)
    return owned


def kept_count(resolved: Mapping[str, set[TP]], result: Result) -> int:
    """Partitions that stay with the member that validly owned them."""
    sets = as_sets(result)
    return sum(len(resolved.get(m, set()) & sets.get(m, set())) for m in sets)


def uniform_kept_bound(resolved: Mapping[str, set[TP]], total_partitions: int, n_members: int) -> int:
    """kept* = sum(min(h_i, q)) + min(r, #{i : h_i >= q + 1}) for q, r = divmod(P, N)."""
    if n_members == 0:
        return 0
    q, r = divmod(total_partitions, n_members)
    h = [len(s) for s in resolved.values()]
    return sum(min(x, q) for x in h) + min(r, sum(1 for x in h if x >= q + 1))


def check_uniform_stickiness(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result, *, exact: bool = True
) -> tuple[int, int]:
    """On an effectively uniform group: kept >= kept* (so moves <= the lower bound; with a balanced
    result this means moves == the bound). Returns (kept, kept*)."""
    if not is_uniform(members, partitions_per_topic):
        raise ValueError("check_uniform_stickiness needs an effectively uniform group")
    resolved = resolve_ownership(members, partitions_per_topic)
    total = len(expected_partitions(members, partitions_per_topic))
    bound = uniform_kept_bound(resolved, total, len(members))
    kept = kept_count(resolved, result)
    if kept < bound:
        moves = sum(len(s) for s in resolved.values()) - kept
        _fail(f"not sticky enough: kept {kept} < kept* {bound} (moves {moves} > {moves - (bound - kept)})")
    if exact and kept > bound:
        # Impossible for a balanced result; flags an oracle/balance inconsistency.
        _fail(f"kept {kept} > kept* {bound}: the result cannot be balanced")
    return kept, bound


def optimal_sticky(
    members: Mapping[str, Any],
    partitions_per_topic: Mapping[str, int],
    resolved: Mapping[str, set[TP]] | None = None,
) -> tuple[int, int, dict[str, int]]:
    """Exact optimum for small heterogeneous cases, by min-cost flow (networkx network simplex).

    Formulation. Partitions are grouped into classes (topic, valid owner or None) with supply =
    size. A class sends flow to every subscriber of its topic; an edge to the class's owner costs
    -1 (a kept partition), other edges cost 0. Member m reaches the sink through unit edges
    k = 1..cap(m) costing W * (2k - 1), the marginal cost of W * load^2 (convex, so flow fills them
    in order). Total cost = W * sum(load^2) - kept. Any two loads with the same total differ in
    sum(load^2) by an even number >= 2, and kept <= P, so with W = P + 1 the optimum first
    minimises sum(load^2) -- equivalent to "no cost-reducing path" (optimal semi-matching) -- and
    then maximises kept among those load vectors.

    Returns (max kept, min sum of squares, member -> load in the optimal solution).
    """
    import networkx as nx

    if resolved is None:
        resolved = resolve_ownership(members, partitions_per_topic)
    subs = effective_subscriptions(members, partitions_per_topic)
    owner_of = {tp: m for m, s in resolved.items() for tp in s}
    parts = sorted(expected_partitions(members, partitions_per_topic))
    total = len(parts)
    if total == 0:
        return 0, 0, {m: 0 for m in members}
    W = total + 1
    classes = Counter((t, owner_of.get((t, p))) for t, p in parts)
    G = nx.DiGraph()
    G.add_node("src", demand=-total)
    G.add_node("sink", demand=total)
    cap = {m: sum(partitions_per_topic[t] for t in subs[m]) for m in members}
    for (t, holder), n in classes.items():
        cnode = ("c", t, holder)
        G.add_edge("src", cnode, capacity=n, weight=0)
        for m in members:
            if t in subs[m]:
                G.add_edge(cnode, ("m", m), capacity=n, weight=-1 if holder == m else 0)
    for m in members:
        for k in range(1, min(cap[m], total) + 1):
            G.add_edge(("m", m), ("k", m, k), capacity=1, weight=W * (2 * k - 1))
            G.add_edge(("k", m, k), "sink", capacity=1, weight=0)
    flow = nx.min_cost_flow(G)
    kept = 0
    load = {m: 0 for m in members}
    for (t, holder), _ in classes.items():
        for node, f in flow[("c", t, holder)].items():
            m = node[1]
            load[m] += f
            if holder == m:
                kept += f
    return kept, sum(v * v for v in load.values()), load


def check_optimal_stickiness(
    members: Mapping[str, Any],
    partitions_per_topic: Mapping[str, int],
    result: Result,
    *,
    check_balance: bool = True,
) -> tuple[int, int]:
    """kept(result) equals the min-cost-flow optimum; with ``check_balance``, sum(load^2) equals
    the optimum too (an independent second balance oracle). Returns (kept, optimum)."""
    resolved = resolve_ownership(members, partitions_per_topic)
    best_kept, best_sq, _ = optimal_sticky(members, partitions_per_topic, resolved)
    if check_balance:
        sq = sum_of_squares(result)
        if sq != best_sq:
            _fail(f"load vector not optimal: sum(load^2) {sq} != optimum {best_sq} (loads {dict(loads(result))})")
    kept = kept_count(resolved, result)
    if kept != best_kept:
        _fail(f"stickiness not optimal: kept {kept} != optimum {best_kept}")
    return kept, best_kept


# --------------------------------------------------------------------------------------------
# Cooperative protocol
# --------------------------------------------------------------------------------------------


def raw_owned(members: Mapping[str, Any]) -> dict[str, set[TP]]:
    """member -> what it lists in owned_partitions (what it will revoke if not assigned again)."""
    return {m: {(tp[0], tp[1]) for tp in mem.owned_partitions} for m, mem in members.items()}


def unsafe_transfers(previous: Mapping[str, Iterable[Any]], result: Result) -> list[tuple[TP, str, str]]:
    """(partition, from, to) for every partition revoked from one member and added to another in
    the same round. ``previous`` is what each member owned going into the round; members absent
    from ``result`` have left and revoke nothing."""
    prev = {m: {(tp[0], tp[1]) for tp in tps} for m, tps in previous.items()}
    now = as_sets(result)
    revoked_from: dict[TP, list[str]] = defaultdict(list)
    for m, s in prev.items():
        if m not in now:
            continue  # left the group: it revokes nothing in this round's protocol
        for tp in s - now[m]:
            revoked_from[tp].append(m)
    bad = []
    for m, s in now.items():
        for tp in s - prev.get(m, set()):
            for x in revoked_from.get(tp, ()):
                if x != m:
                    bad.append((tp, x, m))
    return sorted(bad)


def check_cooperative_safety(previous: Mapping[str, Iterable[Any]], result: Result) -> None:
    bad = unsafe_transfers(previous, result)
    if bad:
        (t, p), x, y = bad[0]
        _fail(f"{len(bad)} unsafe transfers, e.g. {t}-{p} revoked from {x} and added to {y} in one round")


def check_withholding_justified(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result
) -> set[TP]:
    """Every unassigned partition must be one that some member still lists as owned and is losing
    (it is being revoked, so it may be withheld). Returns the withheld set."""
    missing = missing_partitions(members, partitions_per_topic, result)
    prev = raw_owned(members)
    now = as_sets(result)
    for tp in sorted(missing):
        if not any(tp in prev[m] and tp not in now[m] for m in members):
            _fail(f"{tp[0]}-{tp[1]} withheld although nobody is revoking it")
    return missing


def next_round(members: Mapping[str, Any], result: Result, generation: int) -> dict[str, Any]:
    """The members as they rejoin after ``result``: owned = result, at ``generation``."""
    return {
        m: type(mem)(
            mem.topics,
            owned_partitions=list(result[m]),
            generation=generation,
            rack=mem.rack,
            group_instance_id=mem.group_instance_id,
            user_data=mem.user_data,
        )
        for m, mem in members.items()
    }


def check_convergence(
    assign_fn: Callable[[Mapping[str, Any], Mapping[str, int]], Result],
    members: Mapping[str, Any],
    partitions_per_topic: Mapping[str, int],
    first: Result,
    generation: int,
) -> int:
    """Feed ``first`` (round 1's result) back as owned partitions at ``generation`` (then
    generation + 1). A complete assignment must be reached by round 2, every round must be
    cooperative-safe, and the next round must change nothing. Returns the rounds needed (1 or 2)."""
    rounds = 1
    current = first
    gen = generation
    if missing_partitions(members, partitions_per_topic, current):
        nxt_members = next_round(members, current, gen)
        nxt = assign_fn(nxt_members, partitions_per_topic)
        check_validity(nxt_members, partitions_per_topic, nxt)
        check_cooperative_safety(raw_owned(nxt_members), nxt)
        if missing_partitions(nxt_members, partitions_per_topic, nxt):
            missing = sorted(missing_partitions(nxt_members, partitions_per_topic, nxt))[:5]
            _fail(f"not complete after round 2: {missing} missing")
        gone = {m: sorted(as_sets(current)[m] - as_sets(nxt)[m]) for m in current}
        gone = {m: v for m, v in gone.items() if v}
        if gone:
            _fail(f"follow-up round revoked partitions it had just assigned: {gone}")
        current, gen, rounds = nxt, gen + 1, 2
    again_members = next_round(members, current, gen)
    again = assign_fn(again_members, partitions_per_topic)
    if as_sets(again) != as_sets(current):
        diff = {
            m: (sorted(as_sets(current)[m] - as_sets(again)[m]), sorted(as_sets(again)[m] - as_sets(current)[m]))
            for m in current
            if as_sets(current)[m] != as_sets(again)[m]
        }
        _fail(f"not stable after convergence: (lost, gained) per member {diff}")
    return rounds


# --------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------


def permuted_inputs(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], rnd: random.Random
) -> tuple[dict[str, Any], dict[str, int]]:
    """The same input with dict orders, owned-partition lists and topic lists shuffled."""
    items = list(members.items())
    rnd.shuffle(items)
    new_members = {}
    for m, mem in items:
        topics = list(mem.topics)
        rnd.shuffle(topics)
        owned = list(mem.owned_partitions)
        rnd.shuffle(owned)
        new_members[m] = type(mem)(
            topics,
            owned_partitions=owned,
            generation=mem.generation,
            rack=mem.rack,
            group_instance_id=mem.group_instance_id,
            user_data=mem.user_data,
        )
    titems = list(partitions_per_topic.items())
    rnd.shuffle(titems)
    return new_members, dict(titems)


def check_deterministic(
    assign_fn: Callable[[Mapping[str, Any], Mapping[str, int]], Result],
    members: Mapping[str, Any],
    partitions_per_topic: Mapping[str, int],
    rnd: random.Random,
    baseline: Result | None = None,
    tries: int = 2,
) -> None:
    """The result is identical (as ordered lists) under ``tries`` random input permutations."""
    base = baseline if baseline is not None else assign_fn(members, partitions_per_topic)
    ref = {m: [(tp[0], tp[1]) for tp in tps] for m, tps in base.items()}
    for _ in range(tries):
        pm, pt = permuted_inputs(members, partitions_per_topic, rnd)
        other = assign_fn(pm, pt)
        got = {m: [(tp[0], tp[1]) for tp in tps] for m, tps in other.items()}
        if got != ref:
            diff = sorted(m for m in ref if ref[m] != got.get(m))
            _fail(f"result depends on input order: members {diff[:5]} differ")


# --------------------------------------------------------------------------------------------
# Racks
# --------------------------------------------------------------------------------------------


def rack_locality(
    members: Mapping[str, Any], result: Result, partition_racks: Mapping[tuple[str, int], Iterable[str]]
) -> dict[str, int]:
    """Counts of assigned partitions: ``local`` (the member's rack hosts a replica), ``mismatch``
    (the member has a rack, the partition has rack data, and no replica is there) and ``unknown``
    (no member rack or no partition rack data), as KIP-881 counts them."""
    racks = {(t, p): set(r) for (t, p), r in partition_racks.items()}
    out = {"local": 0, "mismatch": 0, "unknown": 0}
    for m, tps in result.items():
        rack = members[m].rack or None
        for tp in tps:
            pr = racks.get((tp[0], tp[1]))
            if rack is None or not pr:
                out["unknown"] += 1
            elif rack in pr:
                out["local"] += 1
            else:
                out["mismatch"] += 1
    return out


def max_rack_locality_balanced(
    members: Mapping[str, Any],
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[tuple[str, int], Iterable[str]],
) -> int:
    """The most rack-local partitions any balance-optimal assignment can have (min-cost flow with
    the same convex load cost as :func:`optimal_sticky`, -1 per local placement)."""
    import networkx as nx

    subs = effective_subscriptions(members, partitions_per_topic)
    parts = sorted(expected_partitions(members, partitions_per_topic))
    total = len(parts)
    if total == 0:
        return 0
    W = total + 1
    G = nx.DiGraph()
    G.add_node("src", demand=-total)
    G.add_node("sink", demand=total)
    for t, p in parts:
        pr = set(partition_racks.get((t, p), ()))
        G.add_edge("src", ("p", t, p), capacity=1, weight=0)
        for m, mem in members.items():
            if t in subs[m]:
                local = bool(mem.rack) and mem.rack in pr
                G.add_edge(("p", t, p), ("m", m), capacity=1, weight=-1 if local else 0)
    for m in members:
        cap = sum(partitions_per_topic[t] for t in subs[m])
        for k in range(1, min(cap, total) + 1):
            G.add_edge(("m", m), ("k", m, k), capacity=1, weight=W * (2 * k - 1))
            G.add_edge(("k", m, k), "sink", capacity=1, weight=0)
    flow = nx.min_cost_flow(G)
    local = 0
    for t, p in parts:
        for node, f in flow[("p", t, p)].items():
            m = node[1]
            if f and members[m].rack and members[m].rack in set(partition_racks.get((t, p), ())):
                local += f
    return local


# --------------------------------------------------------------------------------------------
# Other strategy-specific facts
# --------------------------------------------------------------------------------------------


def check_per_topic_balance(
    members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result
) -> None:
    """For each topic, its subscribers' counts of that topic differ by at most 1."""
    subs = effective_subscriptions(members, partitions_per_topic)
    sets = as_sets(result)
    for t in sorted(existing_topics(partitions_per_topic)):
        holders = [m for m in members if t in subs[m]]
        if not holders:
            continue
        counts = {m: sum(1 for tp in sets[m] if tp[0] == t) for m in holders}
        if max(counts.values()) - min(counts.values()) > 1:
            _fail(f"topic {t} unevenly spread: {counts}")


def failover_priority(user_data: bytes | None) -> int | None:
    """A big-endian signed int32 from exactly 4 bytes; None (= lowest) when missing or malformed."""
    if user_data is None or len(user_data) != 4:
        return None
    return int.from_bytes(user_data, "big", signed=True)


def check_failover_owner(members: Mapping[str, Any], partitions_per_topic: Mapping[str, int], result: Result) -> None:
    """Each topic's partitions all go to one subscriber with the highest priority among its
    subscribers (tie order is not checked here)."""
    subs = effective_subscriptions(members, partitions_per_topic)
    sets = as_sets(result)

    def prio(m: str) -> tuple[int, int]:
        p = failover_priority(members[m].user_data)
        return (0, 0) if p is None else (1, p)

    for t in sorted(existing_topics(partitions_per_topic)):
        subscribers = [m for m in members if t in subs[m]]
        if not subscribers:
            continue
        holders = {m for m in members if any(tp[0] == t for tp in sets[m])}
        if len(holders) != 1:
            _fail(f"failover: topic {t} split over {sorted(holders)}")
        (h,) = holders
        best = max(prio(m) for m in subscribers)
        if prio(h) != best:
            _fail(f"failover: topic {t} went to {h} (priority {prio(h)}) but the best subscriber priority is {best}")
