"""``lag-aware``: spread consumer lag evenly, partition counts first (KAFKA-5337's proposal).

Source: the Apache Kafka wiki proposal for a lag-aware assignor, KAFKA-5337
(https://cwiki.apache.org/confluence/pages/viewpage.action?pageId=71011801,
https://issues.apache.org/jira/browse/KAFKA-5337), which describes the rule in prose and links a
prototype (github.com/grantneale/kafka-lag-based-assignor). The proposal's text says three things:
partition counts are balanced per topic and that goal comes first; among members with equal counts
a partition goes to the member with the least *total* assigned lag; and a consumer's total lag is
the sum over *all* its assigned partitions. The prototype code differs from the text: it resets
every member's lag to zero for each topic.

Modes (``mode=``):

* ``"proposal"`` (the default) - the proposal's text. Topics are placed one at a time (order
  below); within a topic, partitions are taken in order of lag descending (ties: partition
  ascending) and each goes to the subscriber with the fewest partitions *of this topic*, then the
  least total lag *over every topic placed so far*, then the smallest member id. Per-topic counts
  differ by at most one among a topic's subscribers. Topic order: topics with the fewest
  subscribers first (the most constrained, as KIP-49 orders them), then the topic whose hottest
  partition lags most, then more partitions, then topic name.
* ``"per-topic"`` - the prototype's rule: the same per-topic count balance, but counts *and lags*
  start from zero for every topic, so the hottest partition of every topic lands on the same first
  members. Kept for anyone who needs the prototype's exact output; not improved unless
  ``improve=True`` is passed.
* ``"global"`` - counts and lags are kept across all topics, counts balanced overall rather than
  per topic. Placement order: partitions of the topics with the fewest subscribers first, then lag
  descending, then topics with more partitions, then topic name, then partition; each goes to the
  subscriber with the fewest partitions overall, then the least total lag, then member id. With
  all lags zero this is exactly the ``fair`` strategy.

The proposal's worked example (C0, C1 on t0 with lags p0=100000, p1=60000, p2=50000) gives
C0 [t0-0] (100000), C1 [t0-1, t0-2] (110000) in every mode.

**Improvement pass** (``improve=``, default True except in ``"per-topic"`` mode): after the greedy
pass, the busiest member repeatedly gives a partition to, or swaps one with, a less loaded member
when that lowers the busiest member's lag and leaves the other one below it. Only exchanges that
keep the mode's count rule are made: a single move only from a member holding more partitions (of
that topic, or overall in ``"global"`` mode) to one holding fewer, swaps within a topic (any two
topics both members subscribe to in ``"global"`` mode). Counts therefore stay exactly as balanced
as the greedy pass left them. After each exchange, swaps between the same pair continue while they
pay, so a member holding a hot partition sheds its share of the others in one round. It stops when
the busiest member is within 0.5 % of the lower bound ``max(largest partition lag, total lag /
members)`` or no exchange helps; its work is bounded (a fixed number of rounds per member, a fixed
sample per list, a work budget linear in the partitions), so large groups stay linear.
:func:`solve` (and :func:`kassign.assign_lag_aware`) report how far the result is from the bound.

**Sticky mode** (``sticky=True``, per-topic count rule modes only): each member keeps the
partitions it owned (``Member.owned_partitions``; a partition claimed by several members goes to
the highest generation, ties to nobody, as for the sticky strategies) while the count rule allows:
per topic, no member keeps more than ceil(partitions / subscribers), and only as many members keep
that many as the topic's remainder allows (members owning more first, then member id). Over the
quota, a member keeps its hottest partitions. The rest is placed by the mode's greedy rule. The
improvement pass then moves freely the partitions that were not kept, and moves or swaps a kept
partition only when that lowers the busiest member's lag by at least ``min_gain`` (a fraction of
that member's lag; default 0.05, i.e. 5 %). ``min_gain=0`` allows every improving exchange;
``min_gain=1`` never moves a kept partition.

Other options (keyword arguments of :func:`kassign.assign`):

* ``max_skew=N`` (int >= 0, default 0): a member may be picked while it holds up to ``N`` more
  partitions than the least-loaded eligible member (of the topic in the per-topic modes, overall in
  global mode); among those, the least total lag wins (then fewer partitions, then member id).
  Member counts then differ by at most ``N + 1`` instead of 1.
* ``lag_provider``: an object with ``lags(partitions) -> mapping or None`` (see
  :mod:`kassign.lag`), asked for the lags of every partition being assigned when ``lags`` is not
  given. When it returns None (offsets could not be read; it logs a warning), every lag counts as
  0 and the result is the count-only balance.

Partitions with no entry in ``lags`` have lag 0. How lag is computed from offsets, including
``auto.offset.reset`` and committed offsets below the log start, is in :mod:`kassign.lag`.

Deliberate differences from the proposal's prototype: ties go to the smallest member id (the
prototype's depend on map order), topics without metadata are skipped, and lag is an input
(fetched outside the rebalance, by a separate client) rather than read by a consumer that joins
the group mid-rebalance.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from .._inputs import (
    LAG_AWARE,
    LAG_AWARE_DEFAULT_MIN_GAIN,
    LAG_AWARE_DEFAULT_MODE,
    LAG_AWARE_MODES,
    LagAwareOptions,
    check_inputs,
    check_lags,
    lag_aware_options,
)
from .._types import Member, TopicPartition
from ._greedy import TOPIC_LAGS, Inputs, build_result, deal_global, kernel_skew

NAME = LAG_AWARE
MODES = LAG_AWARE_MODES
DEFAULT_MODE = LAG_AWARE_DEFAULT_MODE
DEFAULT_MIN_GAIN = LAG_AWARE_DEFAULT_MIN_GAIN
#: The options' check, for callers that configure the strategy ahead of a rebalance (the drop-in
#: classes): the same function ``kassign.assign`` runs (:func:`kassign._inputs.lag_aware_options`).
parse_options = lag_aware_options

#: Improvement pass limits: rounds per member (plus a constant), lowest-loaded partners tried per
#: round (more while none helps), and elements of a list scanned when looking for a swap.
_ROUNDS_PER_MEMBER = 4
_ROUNDS_EXTRA = 64
_PARTNERS = 6
_PARTNERS_WIDE = 64  # partners tried before giving up when none of the first ones helps
_SWAP_SAMPLE = 64
#: Work budget of one improvement run, in list elements examined: this many per tracked partition,
#: plus a constant (keeps the pass linear in the group size).
_WORK_PER_PARTITION = 0.25
_WORK_EXTRA = 100_000
#: The pass stops (or does not start) once the busiest member is within this fraction of the lower
#: bound: closer than that, its work is not worth the few messages it could still shift.
_TOLERANCE = 0.005

Lags = dict[tuple[str, int], int] | None


@dataclass(frozen=True)
class LagAwareResult:
    """A ``lag-aware`` assignment and how close it is to the lower bound.

    Attributes:
        assignment: member id -> partitions (what :func:`kassign.assign` returns).
        max_member_lag: the busiest member's total lag.
        lower_bound: max(largest assignable partition lag, total assignable lag / members): no
            assignment has a busiest member below it.
        ratio: ``max_member_lag / lower_bound`` (1.0 is the best possible), None without lag.
        greedy_max_member_lag: the busiest member's lag after the greedy pass, before improvement.
        improvement_moves: partitions that changed member in the improvement pass (a swap is 2).
        kept: partitions left with their previous owner (sticky mode; 0 otherwise).
        mode: the mode used.
    """

    assignment: dict[str, list[TopicPartition]]
    max_member_lag: int
    lower_bound: float
    ratio: float | None
    greedy_max_member_lag: int
    improvement_moves: int
    kept: int
    mode: str


def _provided_lags(provider: Any, subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int]) -> Lags:
    wanted = [TopicPartition(t, p) for t in sorted(subs) for p in range(partitions_per_topic[t])]
    got = provider.lags(wanted)
    if got is None:
        return None
    return check_lags(got)


def assign(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: Lags = None,
    partition_racks: Any = None,
    options: LagAwareOptions,
) -> dict[str, list[TopicPartition]]:
    """The ``lag-aware`` strategy (module docstring) on inputs and options already checked by
    ``kassign.assign`` (:func:`kassign._inputs.check_inputs`)."""
    ids, own, _ = _solve(Inputs(members, partitions_per_topic, lags), options)
    return build_result(list(members), ids, own)


def reads_history(options: LagAwareOptions) -> bool:
    """Whether the result depends on owned partitions and generations: only with ``sticky=True``."""
    return options.sticky


def owners(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: Lags = None,
    partition_racks: Any = None,
    **options: Any,
) -> dict[str, array[int]]:
    """The placement as owner arrays: topic -> the owner of each partition, as an index into
    ``sorted(members)`` (what :func:`assign` turns into lists). Checks ``lags`` and ``options``."""
    checked = check_inputs("assign", NAME, True, partition_racks, lags, options)
    return owners_of(Inputs(members, partitions_per_topic, checked.lags), checked.options)


def owners_of(inputs: Inputs, options: LagAwareOptions) -> dict[str, array[int]]:
    """:func:`owners` on inputs prepared once (:class:`kassign.assignors._greedy.Inputs`) and
    options already checked (:func:`kassign._inputs.lag_aware_options`)."""
    return _solve(inputs, options)[1]


def solve(
    members: dict[str, Member],
    partitions_per_topic: dict[str, int],
    *,
    lags: Any = None,
    partition_racks: Any = None,
    **options: Any,
) -> LagAwareResult:
    """The ``lag-aware`` strategy with its distance from the lower bound (members and partitions
    already checked; ``lags`` and ``options`` are checked here)."""
    checked = check_inputs("assign", NAME, True, partition_racks, lags, options)
    ids, own, stats = _solve(Inputs(members, partitions_per_topic, checked.lags), checked.options)
    return LagAwareResult(assignment=build_result(list(members), ids, own), **stats)


def _solve(inputs: Inputs, opts: LagAwareOptions) -> tuple[list[str], dict[str, array[int]], dict[str, Any]]:
    if opts.sticky:
        inputs.read_previous()  # the claims first: the subscribers come from the same read of the group
    ids, subs, partitions_per_topic = inputs.ids, inputs.subs, inputs.partitions_per_topic
    if opts.lag_provider is not None:
        lags = _provided_lags(opts.lag_provider, subs, partitions_per_topic)
        arrays: dict[str, array[int]] = _lag_arrays(subs, partitions_per_topic, lags)
    elif "lag-aware:arrays" in inputs.memo:
        arrays = inputs.memo["lag-aware:arrays"]  # the same for every mode: derived once, read-only
    else:
        cache = inputs.shared.setdefault(TOPIC_LAGS, {})
        arrays = inputs.memo["lag-aware:arrays"] = _lag_arrays(subs, partitions_per_topic, inputs.lags, cache)
    n = len(ids)
    kept = 0
    frozen: dict[str, bytes] | None = None
    if opts.sticky:
        owners, kept, frozen = _sticky(inputs, subs, partitions_per_topic, arrays, opts.max_skew, opts.mode)
    elif opts.mode == "proposal":
        owners = _carry_lag(n, subs, partitions_per_topic, arrays, opts.max_skew)
    elif opts.mode == "per-topic":
        owners = _per_topic(n, subs, partitions_per_topic, arrays, opts.max_skew)
    else:
        owners = deal_global(n, subs, partitions_per_topic, arrays, opts.max_skew)

    from .. import _core

    lag_topics = list(arrays)
    load = _core.greedy_loads(n, [owners[t] for t in lag_topics], [arrays[t] for t in lag_topics])
    summary = _lag_summary(arrays)
    total = sum(s for _, s in summary.values())
    top = max((m for m, _ in summary.values()), default=0)
    greedy_max = max(load, default=0)
    bound = max(float(top), total / n) if n and total else 0.0
    moved = 0
    limit = max(top, -(-total // n)) if n else 0
    if opts.improve and greedy_max > max(limit, int(limit * (1 + _TOLERANCE))):
        # phase 1: partitions not kept (all without sticky); phase 2 (sticky): kept ones too
        phases = [(0.0, frozen)] if frozen is None or not kept else [(0.0, frozen), (opts.min_gain, None)]
        moved, load = _improve(n, subs, owners, arrays, load, opts.mode == "global", limit, phases)
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


def _lag_arrays(
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    lags: Lags,
    cache: dict[str, array[int] | None] | None = None,
) -> dict[str, array[int]]:
    """topic -> lag of each partition, for the placed topics that have some non-zero lag.
    ``cache`` (topic -> array, or None without lag) keeps the arrays of earlier calls with the same
    ``partitions_per_topic`` and ``lags`` (the arrays are read-only)."""
    if not lags:
        return {}
    arrays = {}
    get = lags.get
    for t in subs:
        if cache is not None and t in cache:
            arr = cache[t]
        else:
            lags_of_t = [get((t, p), 0) for p in range(partitions_per_topic[t])]
            arr = array("q", lags_of_t) if any(lags_of_t) else None
            if cache is not None:
                cache[t] = arr
        if arr is not None:
            arrays[t] = arr
    return arrays


# -- "per-topic": the prototype ------------------------------------------------------------------


def _per_topic(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, array[int]],
    skew: int,
    preset: dict[str, array[int]] | None = None,
) -> dict[str, array[int]]:
    """The prototype's rule (module docstring): every topic placed from zero counts and lags (plus
    the lag of its owners already fixed in ``preset``, sticky mode; -1 = free), in ``subs``' order.
    The loop runs in the Rust core (``_core.greedy_per_topic``)."""
    from .. import _core

    topics = list(subs)
    args = [(subs[t], partitions_per_topic[t], arrays.get(t), preset.get(t) if preset else None) for t in topics]
    return dict(zip(topics, _core.greedy_per_topic(args, n_members, kernel_skew(skew))))


# -- "proposal": per-topic counts, lag carried across topics --------------------------------------


def _lag_summary(arrays: dict[str, array[int]]) -> dict[str, tuple[int, int]]:
    """topic -> (its largest lag, its total lag), computed in the core (``_core.lag_summary``)."""
    from .. import _core

    topics = list(arrays)
    return dict(zip(topics, _core.lag_summary([arrays[t] for t in topics])))


def _topic_order(
    subs: dict[str, tuple[int, ...]], partitions_per_topic: dict[str, int], arrays: dict[str, array[int]]
) -> list[str]:
    tops = {t: top for t, (top, _) in _lag_summary(arrays).items()}
    return sorted(subs, key=lambda t: (len(subs[t]), -tops.get(t, 0), -partitions_per_topic[t], t))


def _carry_lag(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, array[int]],
    skew: int,
    load: list[int] | None = None,
    preset: dict[str, array[int]] | None = None,
) -> dict[str, array[int]]:
    """The proposal's rule (module docstring): per-topic counts, each member's lag carried across
    topics, in :func:`_topic_order`'s order. ``preset`` (sticky mode) maps a topic to owners
    already fixed (-1 = free); ``load`` is each member's lag from those (updated).

    The placement loops run in the Rust core (``_core.greedy_carry_lag``).
    """
    from .. import _core

    start = load if load is not None else [0] * n_members
    order = _topic_order(subs, partitions_per_topic, arrays)
    args = [(subs[t], partitions_per_topic[t], arrays.get(t), preset.get(t) if preset else None) for t in order]
    owned, after = _core.greedy_carry_lag(args, start, kernel_skew(skew))
    if load is not None:
        load[:] = after
    return dict(zip(order, owned))


# -- sticky -----------------------------------------------------------------------------------------


def _sticky(
    inputs: Inputs,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: dict[str, array[int]],
    skew: int,
    mode: str,
) -> tuple[dict[str, array[int]], int, dict[str, bytes]]:
    """Keep owned partitions within the per-topic quota (module docstring, sticky mode), place the
    rest by the mode's rule, from what the members previously owned
    (:meth:`kassign.assignors._greedy.Inputs.read_previous`: the core's claim rule). Returns
    (owners, kept, frozen: topic -> per-partition 'kept' flags). The keep step runs in the Rust
    core (``_core.greedy_keep``)."""
    from .. import _core

    n_members = len(inputs.ids)
    by_topic = inputs.read_previous()
    topics = list(by_topic)
    args = [(subs[t], partitions_per_topic[t], arrays.get(t), by_topic[t]) for t in topics]
    fixed, flags, kept, load = _core.greedy_keep(args, n_members)
    preset = dict(zip(topics, fixed))
    frozen = dict(zip(topics, flags))
    if mode == "per-topic":
        # The prototype's rule with the kept partitions in place: every topic starts from zero lag.
        return _per_topic(n_members, subs, partitions_per_topic, arrays, skew, preset), kept, frozen
    owners = _carry_lag(n_members, subs, partitions_per_topic, arrays, skew, load=load, preset=preset)
    return owners, kept, frozen


# -- improvement pass -------------------------------------------------------------------------------

Phases = list[tuple[float, "dict[str, bytes] | None"]]


def _improve(
    n: int,
    subs: dict[str, tuple[int, ...]],
    owners: dict[str, array[int]],
    arrays: dict[str, array[int]],
    load: list[int],
    overall: bool,
    limit: int,
    phases: Phases,
) -> tuple[int, list[int]]:
    """The improvement pass (module docstring) over ``owners`` (updated in place) from ``load``,
    one run per phase (least gain as a fraction of the busiest member's lag, frozen flags per
    topic or None). Returns (partition moves, loads after).

    The pass runs in the Rust core (``_core.lag_improve``) with this module's bounds; every topic
    of ``subs`` must have owners.
    """
    from .. import _core

    topics = list(subs)
    index = {t: k for k, t in enumerate(topics)}
    moved, lists, after = _core.lag_improve(
        [subs[t] for t in topics],
        [owners[t] for t in topics],
        [arrays.get(t) for t in topics],
        [index[t] for t in (owners if overall else arrays)],
        load,
        overall,
        max(limit, int(limit * (1 + _TOLERANCE))),
        [(need, None if fz is None else [fz.get(t) for t in topics]) for need, fz in phases],
        (
            _ROUNDS_PER_MEMBER,
            _ROUNDS_EXTRA,
            _PARTNERS,
            _PARTNERS_WIDE,
            _SWAP_SAMPLE,
            _WORK_PER_PARTITION,
            _WORK_EXTRA,
        ),
    )
    for t, own in zip(topics, lists):
        owners[t][:] = own
    return sum(moved), after
