"""``lag-aware``: spread consumer lag evenly, partition counts first (KAFKA-5337's proposal).

Default, ``mode="per-topic"``: the proposal's exact rule. Topics are independent (counts and lags
start from zero for every topic). Within a topic, partitions are taken in order of lag descending
(ties: partition ascending) and each goes to the subscriber with the fewest partitions *of this
topic*, then the least total lag *in this topic*, then the smallest member id. Counts per topic
therefore differ by at most one, and within that constraint lag is spread greedily (LPT-style).

Example (the proposal's): C0, C1 on t0 with lags p0=100000, p1=60000, p2=50000 ->
C0 [t0-0] (100000), C1 [t0-1, t0-2] (110000).

Options (keyword arguments of :func:`kassign.assign`):

* ``mode="global"``: counts and lags are kept across all topics, so many single-partition topics
  no longer all land on the first member (with per-topic state, every topic starts from scratch
  and its first partition goes to the smallest member id). Placement order: partitions of the
  topics with the fewest subscribers first (the most constrained, as KIP-49 orders topics), then
  lag descending, then topics with more partitions, then topic name, then partition. Each goes to
  the subscriber with the fewest partitions overall, then the least total lag, then member id.
  With all lags zero this is exactly the ``fair`` strategy; with equal subscriptions it is LPT
  in count-balanced rounds, so max member lag - min member lag <= the largest partition lag.
* ``max_skew=N`` (int >= 0, default 0): a member may be picked while it holds up to ``N`` more
  partitions than the least-loaded eligible member (of the topic in per-topic mode, overall in
  global mode); among those, the least total lag wins (then fewer partitions, then member id).
  Member counts then differ by at most ``N + 1`` instead of 1: ``N`` partitions of count
  imbalance traded for lag balance. ``0`` is count first, the proposal's rule.
* ``lag_provider``: an object with ``lags(partitions) -> mapping or None`` (see
  :mod:`kassign.lag`), asked for the lags of every partition being assigned when ``lags`` is not
  given. When it returns None (offsets could not be read; it logs a warning), every lag counts as
  0 and the result is the count-only balance.

Partitions with no entry in ``lags`` have lag 0 (with no lags at all, the result is a count-only
round-robin per topic, or ``fair`` in global mode). How lag is computed from offsets, including
``auto.offset.reset`` and committed offsets below the log start, is in :mod:`kassign.lag`.

Deliberate differences from the proposal's prototype: ties go to the smallest member id (the
prototype's depend on map order), topics without metadata are skipped, and lag is an input
(fetched outside the rebalance, by a separate client) rather than read by a consumer that joins
the group mid-rebalance. Like the proposal, this strategy is not sticky.
"""

from __future__ import annotations

from heapq import heapify, heapreplace
from typing import Any

from .._types import Member, TopicPartition
from ._greedy import Balancer, build_result, deal_global, subscribers_by_topic

NAME = "lag-aware"
#: The result does not depend on owned partitions or generations (the strategy is not sticky).
READS_HISTORY = False
MODES = ("per-topic", "global")
_OPTIONS = ("mode", "max_skew", "lag_provider")

Lags = dict[tuple[str, int], int] | None


def _parse_options(options: dict[str, Any]) -> tuple[str, int, Any]:
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(
            f"assign: strategy {NAME!r} got unknown options {', '.join(unknown)}; "
            f"it accepts {', '.join(_OPTIONS)}"
        )
    mode = options.get("mode", "per-topic")
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode: expected one of {', '.join(repr(m) for m in MODES)}, got {mode!r}")
    max_skew = options.get("max_skew", 0)
    if not isinstance(max_skew, int) or isinstance(max_skew, bool):
        raise ValueError(f"max_skew: expected a non-negative int, got {max_skew!r}")
    if max_skew < 0:
        raise ValueError(f"max_skew: expected a non-negative int, got {max_skew}")
    provider = options.get("lag_provider")
    if provider is not None and not callable(getattr(provider, "lags", None)):
        raise ValueError(f"lag_provider: expected an object with a lags(partitions) method, got {provider!r}")
    return mode, max_skew, provider


def _provided_lags(provider: Any, subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int]) -> Lags:
    wanted = [TopicPartition(t, p) for t in sorted(subs) for p in range(partitions_per_topic[t])]
    got = provider.lags(wanted)
    if got is None:
        return None
    from .. import _check_lags

    return _check_lags(got)


def owners(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: Lags = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, list[int]]:
    """The ``lag-aware`` placement as owner arrays: topic -> the owner of each partition, as an
    index into ``sorted(members)`` (what :func:`assign` turns into lists)."""
    mode, max_skew, provider = _parse_options(options)
    ids = sorted(members)
    subs = subscribers_by_topic(ids, [members[m].topics for m in ids], partitions_per_topic)
    if provider is not None:
        if lags is not None:
            raise ValueError("lag-aware: pass lags or lag_provider, not both")
        lags = _provided_lags(provider, subs, partitions_per_topic)
    if mode == "per-topic":
        return _per_topic(subs, partitions_per_topic, lags, max_skew)
    return deal_global(len(ids), subs, partitions_per_topic, _lag_arrays(subs, partitions_per_topic, lags), max_skew)


def assign(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: Lags = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, list[TopicPartition]]:
    """The ``lag-aware`` strategy (module docstring); inputs already validated by ``kassign.assign``."""
    own = owners(members, partitions_per_topic, lags=lags, partition_racks=partition_racks, **options)
    return build_result(list(members), sorted(members), own)


def _lag_arrays(
    subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int], lags: Lags
) -> dict[str, list[int]]:
    """topic -> lag of each partition, for the placed topics that have some non-zero lag."""
    if not lags:
        return {}
    arrays = {}
    get = lags.get
    for t in subs:
        arr = [get((t, p), 0) for p in range(partitions_per_topic[t])]
        if any(arr):
            arrays[t] = arr
    return arrays


def _per_topic(
    subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int], lags: Lags, skew: int
) -> dict[str, list[int]]:
    owners: dict[str, list[int]] = {}
    arrays = _lag_arrays(subs, partitions_per_topic, lags)
    for topic, s in subs.items():
        n = partitions_per_topic[topic]
        k = len(s)
        tl = arrays.get(topic)
        if tl is None:
            # All lags equal: every rule reduces to (count, member id), i.e. a round-robin deal.
            owners[topic] = list(s * (n // k + 1))[:n]
            continue
        # Lag descending; sort stability (kept under reverse=True) leaves ties partition-ascending.
        order = sorted(range(n), key=tl.__getitem__, reverse=True)
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
                pick = bal.pick
                place = bal.place
                for p in order[k:]:
                    j = pick(pool, skew)
                    place(j, tl[p])
                    own[p] = s[j]
        owners[topic] = own
    return owners
