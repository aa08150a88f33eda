"""The three strategies written in Python (``lag-aware``, ``fair``, ``failover``) as whole
functions over plain Python lists: the policy of ``kassign.assignors`` as it was when its kernels
took and returned lists, composed with the kernels' Python oracles (``lag_aware_oracle``,
``failover_oracle``). ``tests/properties/test_python_strategies.py`` compares ``kassign.assign``,
``kassign.assign_owners`` and ``kassign.assign_lag_aware`` with these on random groups.

Nothing here calls a ``_core`` kernel of the strategies; the eligible sets come from
``lag_aware_oracle.subscribers_by_topic`` and the previous owners (sticky mode) from the claim
rule's own oracle in ``lag_aware_oracle``'s ``sticky`` (which reads ``Inputs.history``).
"""

from __future__ import annotations

from typing import Any

from kassign import TopicPartition
from kassign._inputs import lag_aware_options
from kassign.assignors._greedy import Inputs

from . import failover_oracle
from . import lag_aware_oracle as oracle

# The improvement pass limits of lag_aware (module constants there, the pass's policy).
_TOLERANCE = 0.005


def _inputs(members: dict[str, Any], partitions_per_topic: dict[str, int], lags: Any) -> Inputs:
    ids = sorted(members)
    subs = oracle.subscribers_by_topic(ids, [members[m].topics for m in ids], partitions_per_topic)
    return Inputs(members, partitions_per_topic, lags, ids=ids, subs=subs)


def _result(members: dict[str, Any], ids: list[str], owners: dict[str, list[int]]) -> dict[str, list[TopicPartition]]:
    lists: list[list[TopicPartition]] = [[] for _ in ids]
    for t in sorted(owners):
        for p, o in enumerate(owners[t]):
            if o >= 0:
                lists[o].append(TopicPartition(t, p))
    rank = {m: k for k, m in enumerate(ids)}
    return {m: lists[rank[m]] for m in members}


def fair_owners(
    members: dict[str, Any], partitions_per_topic: dict[str, int]
) -> tuple[list[str], dict[str, list[int]]]:
    inputs = _inputs(members, partitions_per_topic, None)
    return inputs.ids, oracle.deal_global(len(inputs.ids), inputs.subs, partitions_per_topic, {})


def failover_owners(
    members: dict[str, Any], partitions_per_topic: dict[str, int]
) -> tuple[list[str], dict[str, list[int]]]:
    inputs = _inputs(members, partitions_per_topic, None)
    return inputs.ids, failover_oracle.owners_of(inputs)


def _lag_arrays(
    subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int], lags: Any
) -> dict[str, list[int]]:
    if not lags:
        return {}
    arrays = {}
    for t in subs:
        arr = [lags.get((t, p), 0) for p in range(partitions_per_topic[t])]
        if any(arr):
            arrays[t] = arr
    return arrays


def lag_aware_solve(
    members: dict[str, Any], partitions_per_topic: dict[str, int], lags: Any, **options: Any
) -> tuple[list[str], dict[str, list[int]], dict[str, Any]]:
    """(sorted ids, owners, the statistics of ``LagAwareResult``)."""
    opts = lag_aware_options(options)
    inputs = _inputs(members, partitions_per_topic, lags)
    ids, subs = inputs.ids, inputs.subs
    arrays = _lag_arrays(subs, partitions_per_topic, lags)
    n = len(ids)
    kept = 0
    frozen = None
    if opts.sticky:
        owners, kept, frozen = oracle.sticky(inputs, subs, partitions_per_topic, arrays, opts.max_skew, opts.mode)
    elif opts.mode == "proposal":
        owners = oracle.carry_lag(n, subs, partitions_per_topic, arrays, opts.max_skew)
    elif opts.mode == "per-topic":
        owners = oracle.per_topic(subs, partitions_per_topic, arrays, opts.max_skew)
    else:
        owners = oracle.deal_global(n, subs, partitions_per_topic, arrays, opts.max_skew)
    load = [0] * n
    for t, arr in arrays.items():
        for o, lag in zip(owners[t], arr):
            load[o] += lag
    total = sum(sum(arr) for arr in arrays.values())
    top = max((max(arr) for arr in arrays.values()), default=0)
    greedy_max = max(load, default=0)
    bound = max(float(top), total / n) if n and total else 0.0
    moved = 0
    limit = max(top, -(-total // n)) if n else 0
    if opts.improve and greedy_max > max(limit, int(limit * (1 + _TOLERANCE))):
        phases = [(0.0, frozen)] if frozen is None or not kept else [(0.0, frozen), (opts.min_gain, None)]
        moved, load = oracle.improve(n, subs, owners, arrays, load, opts.mode == "global", limit, phases)
    best = max(load, default=0)
    stats = dict(
        max_member_lag=best,
        lower_bound=bound,
        ratio=best / bound if bound > 0 else None,
        greedy_max_member_lag=greedy_max,
        improvement_moves=moved,
        kept=kept,
        mode=opts.mode,
    )
    return ids, owners, stats


def assign(
    strategy: str, members: dict[str, Any], partitions_per_topic: dict[str, int], lags: Any = None, **options: Any
) -> dict[str, list[TopicPartition]]:
    """``kassign.assign(strategy, ...)`` for the three Python strategies, from the oracles."""
    if strategy == "fair":
        ids, owners = fair_owners(members, partitions_per_topic)
    elif strategy == "failover":
        ids, owners = failover_owners(members, partitions_per_topic)
    else:
        ids, owners, _ = lag_aware_solve(members, partitions_per_topic, lags, **options)
    return _result(members, ids, owners)
