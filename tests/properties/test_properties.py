"""Property tests over every strategy in ``kassign.STRATEGIES`` (docs/oracles.md).

The strategy list is read at collection time, so every strategy of the build is covered;
strategy-specific oracles switch on by name. Every expected answer comes from ``tests/support/oracles.py``, never from
kassign.

Budgets: each test's ``max_examples`` is the active hypothesis profile's (tests/conftest.py:
dev 100, ci 200, long 100 000) scaled by the test's weight below, with a floor so quick profiles
still run a meaningful number. The all-strategy tests share weights 0.5 + 0.25 + 0.25 across the
strategies present, so ``make test-long`` (HYPOTHESIS_PROFILE=long) runs >= 100k cases in total
whatever the build has, plus the sticky-only tests (0.08 + 0.08 + 0.04 + 0.04 each). Set
``KASSIGN_CASE_LOG=path`` to append the per-test case counts actually run (JSON lines).

Speed: the generators reuse strategy objects built once (``ints``, ``pick``, ``subset`` below);
``python tests/properties/compare_property_inputs.py REV`` checks that a rewrite of this file still hands
kassign exactly the same inputs as revision REV under a fixed seed.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import kassign
from kassign import Member
from support import oracles as O

# The property suite: hundreds of hypothesis cases per strategy.
pytestmark = pytest.mark.slow

STRATEGIES = tuple(kassign.STRATEGIES)
STICKY = {"sticky", "cooperative-sticky"}
COOPERATIVE = {"cooperative-sticky"}
STICKY_PRESENT = tuple(sorted(STICKY))  # both are in every build: a missing one fails

_BASE = settings().max_examples


def budget(weight: float, shared: int = 1) -> settings:
    """``weight`` x the profile's max_examples, split evenly over ``shared`` parametrized variants
    (so the long run's total stays about the same as strategies land); floor: the profile's own
    value, capped at 50."""
    n = max(min(_BASE, 50), math.ceil(_BASE * weight / max(shared, 1)))
    return settings(
        max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
    )


CASES: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def _case_log():
    yield
    path = os.environ.get("KASSIGN_CASE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(
                json.dumps(
                    {
                        "module": __name__,
                        "profile": os.environ.get("HYPOTHESIS_PROFILE", "dev"),
                        "cases": dict(CASES),
                        "total": sum(CASES.values()),
                    }
                )
                + "\n"
            )


def count(test: str, strategy: str) -> None:
    CASES[f"{test}[{strategy}]"] += 1


def assign(strategy, members, topics, **kw):
    return kassign.assign(strategy, members, topics, **kw)


# --------------------------------------------------------------------------------------------
# Generators
# --------------------------------------------------------------------------------------------

# Ids of varied length and shape so that "sorted by id" is not "sorted by creation".
MEMBER_IDS = ["m1", "m10", "m2", "a", "consumer-7f3a", "c-0", "zz", "b_1", "m9", "c-10", "x", "y"]
TOPIC_NAMES = ["t0", "t1", "t2", "t3", "t4"]
GHOST = "ghost"  # subscribed, never has metadata
GONE = "gone"  # owned in the past, deleted


# Strategy objects are built once and reused (the helpers below are cached on their arguments):
# building and validating a new ``st.lists(st.sampled_from(...))`` for every draw cost more than
# drawing from it. A cached strategy is the same strategy, so every draw and the distribution of
# generated inputs are exactly what building it in place would give.


@functools.cache
def ints(lo: int, hi: int):
    return st.integers(lo, hi)


@functools.cache
def pick(options: tuple):
    """``st.sampled_from(options)``, built once per options tuple."""
    return st.sampled_from(options)


@functools.cache
def subset(options: tuple, min_size: int = 0, max_size: int | None = None):
    """``st.lists(st.sampled_from(options), unique=True)`` (a random ordered subset), built once."""
    return st.lists(pick(options), min_size=min_size, max_size=max_size, unique=True)


BOOLS = st.booleans()


@functools.cache
def user_data():
    return st.one_of(
        st.none(),
        st.integers(-(2**31), 2**31 - 1).map(lambda p: p.to_bytes(4, "big", signed=True)),
        st.integers(-3, 3).map(lambda p: p.to_bytes(4, "big", signed=True)),  # frequent ties
        st.binary(max_size=6),  # malformed lengths too
    )


@st.composite
def topic_table(draw, max_topics=5, max_partitions=10):
    n = draw(ints(1, max_topics))
    return {TOPIC_NAMES[i]: draw(ints(0, max_partitions)) for i in range(n)}


@st.composite
def owned_history(draw, topics, subs, max_claims=12):
    """Arbitrary, possibly invalid history: real claims, out-of-range indexes, deleted topics,
    unsubscribed topics, duplicates."""
    names = tuple(sorted(topics)) + (GONE,)
    claims = draw(_claims(names, draw(ints(1, 12)), max_claims))
    return claims


@functools.cache
def _claims(names: tuple, hi: int, max_claims: int):
    return st.lists(st.tuples(pick(names), ints(0, hi)), max_size=max_claims)


@st.composite
def groups(draw, uniform=None, max_members=8, max_topics=5, max_partitions=10, history=True, statics=True):
    """(members, partitions_per_topic). ``uniform``: True / False / None (either)."""
    topics = draw(topic_table(max_topics, max_partitions))
    if uniform is None:
        uniform = draw(BOOLS)
    names = tuple(sorted(topics)) + (GHOST,)
    n = draw(ints(1, max_members))
    ids = draw(subset(tuple(MEMBER_IDS), n, n))
    common = draw(subset(names, 1))
    members = {}
    for mid in ids:
        subs = common if uniform else draw(subset(names))
        owned = draw(owned_history(topics, subs)) if history and draw(BOOLS) else []
        gen = draw(ints(-1, 6)) if owned or draw(BOOLS) else -1
        gid = draw(pick((None, None, "i-a", "i-b", "i-c"))) if statics else None
        members[mid] = Member(subs, owned, gen, group_instance_id=gid, user_data=draw(user_data()))
    # Static instance ids are unique within a group.
    seen = set()
    for mid, m in list(members.items()):
        if m.group_instance_id is not None:
            if m.group_instance_id in seen:
                members[mid] = Member(m.topics, m.owned_partitions, m.generation, user_data=m.user_data)
            seen.add(m.group_instance_id)
    return members, topics


LAG_VALUES = st.sampled_from([0, 1, 7, 100, 5000, 10**6]) | st.integers(0, 10**9)


@st.composite
def lags_for(draw, topics):
    lags = {}
    for t, n in topics.items():
        for p in range(n):
            if draw(ints(0, 3)):
                lags[(t, p)] = draw(LAG_VALUES)
    return lags


# --------------------------------------------------------------------------------------------
# The per-strategy oracle bundle
# --------------------------------------------------------------------------------------------

FLOW_MAX_PARTITIONS = 40  # exact min-cost-flow stickiness check up to this size


def check_round(strategy, members, topics, result, *, exact_flow=True, **kw):
    """All oracles that apply to one round of ``strategy`` on this input. Returns the withheld set."""
    O.check_validity(members, topics, result)
    withheld = set()
    if strategy in COOPERATIVE:
        O.check_cooperative_safety(O.raw_owned(members), result)
        withheld = O.check_withholding_justified(members, topics, result)
    else:
        O.check_completeness(members, topics, result)
    uniform = O.is_uniform(members, topics)
    if strategy in STICKY:
        if not withheld:
            if uniform:
                O.check_uniform_balance(result)
            else:
                O.check_optimal_balance(members, topics, result)
        if uniform:
            O.check_uniform_stickiness(members, topics, result, exact=not withheld)
        elif exact_flow and len(O.expected_partitions(members, topics)) <= FLOW_MAX_PARTITIONS:
            O.check_optimal_stickiness(members, topics, result, check_balance=not withheld)
    elif strategy in ("roundrobin", "fair") and uniform:
        O.check_uniform_balance(result)
    elif strategy in ("range", "lag-aware"):
        O.check_per_topic_balance(members, topics, result)
    elif strategy == "failover":
        O.check_failover_owner(members, topics, result)
    return withheld


def _fn(strategy, **kw):
    return lambda ms, ts: assign(strategy, ms, ts, **kw)


# --------------------------------------------------------------------------------------------
# One round, arbitrary history
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
@budget(0.5, len(STRATEGIES))
@given(data=st.data())
def test_one_round_all_oracles(strategy, data):
    members, topics = data.draw(groups())
    kw = {"lags": data.draw(lags_for(topics))} if strategy == "lag-aware" else {}
    result = assign(strategy, members, topics, **kw)
    note(f"result={result}")
    check_round(strategy, members, topics, result)
    O.check_deterministic(
        _fn(strategy, **kw), members, topics, random.Random(data.draw(ints(0, 2**32))), baseline=result, tries=1
    )
    if strategy in STICKY:
        O.check_convergence(_fn(strategy, **kw), members, topics, result, 100)
    count("one_round", strategy)


@pytest.mark.parametrize("strategy", STICKY_PRESENT)
@budget(0.08)
@given(group=groups(uniform=False, max_members=6, max_topics=4, max_partitions=6))
def test_sticky_heterogeneous_matches_flow_optimum(strategy, group):
    """Thousands of small heterogeneous cases against the exact min-cost-flow optimum."""
    members, topics = group
    result = assign(strategy, members, topics)
    O.check_validity(members, topics, result)
    withheld = O.check_withholding_justified(members, topics, result) if strategy in COOPERATIVE else set()
    if strategy not in COOPERATIVE:
        O.check_completeness(members, topics, result)
    O.check_optimal_stickiness(members, topics, result, check_balance=not withheld)
    if not withheld:
        O.check_optimal_balance(members, topics, result)
    count("flow_optimum", strategy)


@pytest.mark.parametrize("strategy", STICKY_PRESENT)
@budget(0.08)
@given(group=groups(uniform=True, max_members=12, max_topics=4, max_partitions=30))
def test_sticky_uniform_moves_equal_lower_bound(strategy, group):
    members, topics = group
    result = assign(strategy, members, topics)
    check_round(strategy, members, topics, result, exact_flow=False)
    count("uniform_bound", strategy)


# --------------------------------------------------------------------------------------------
# Multi-round churn with history fed back
# --------------------------------------------------------------------------------------------

EVENTS = ["join", "leave", "resubscribe", "grow", "add_topic", "delete_topic", "stale", "none"]
EVENT_LISTS = st.lists(st.sampled_from(EVENTS), max_size=2)


@pytest.mark.parametrize("strategy", STRATEGIES)
@budget(0.25, len(STRATEGIES))
@given(data=st.data())
def test_churn_sequences(strategy, data):
    """Members join, leave, change subscriptions, topics grow / appear / are deleted, some members
    rejoin with a stale generation and old history; each round's result is fed back as the next
    round's owned partitions with generation + 1."""
    topics = data.draw(topic_table(4, 8), label="topics")
    live_names = lambda: tuple(sorted(topics)) + (GHOST,)  # noqa: E731
    subs: dict[str, list[str]] = {}
    for mid in data.draw(subset(tuple(MEMBER_IDS), 1, 6), label="ids"):
        subs[mid] = data.draw(subset(live_names(), 1))
    uniform = data.draw(BOOLS, label="uniform")
    if uniform:
        common = subs[next(iter(subs))]
        subs = {m: list(common) for m in subs}
    owned: dict[str, list] = {m: [] for m in subs}
    history: dict[str, list[tuple[int, list]]] = {m: [] for m in subs}  # (generation, owned) per round
    gen = 1
    lags = data.draw(lags_for({t: 12 for t in TOPIC_NAMES})) if strategy == "lag-aware" else None
    kw = {"lags": lags} if lags is not None else {}
    rounds = data.draw(ints(2, 7), label="rounds")
    for rnd in range(rounds):
        events = data.draw(EVENT_LISTS, label=f"events{rnd}")
        stale = set()
        for ev in events:
            if ev == "join":
                free = [m for m in MEMBER_IDS if m not in subs]
                if free:
                    m = data.draw(pick(tuple(free)))
                    subs[m] = list(subs[next(iter(subs))]) if uniform and subs else data.draw(subset(live_names(), 1))
                    owned[m], history[m] = [], []
            elif ev == "leave" and len(subs) > 1:
                m = data.draw(pick(tuple(sorted(subs))))
                del subs[m], owned[m], history[m]
            elif ev == "resubscribe":
                new = data.draw(subset(live_names(), 1))
                if uniform:
                    subs = {m: list(new) for m in subs}
                else:
                    subs[data.draw(pick(tuple(sorted(subs))))] = new
            elif ev == "grow":
                t = data.draw(pick(tuple(sorted(topics))))
                topics[t] += data.draw(ints(1, 5))
            elif ev == "add_topic":
                free = [t for t in TOPIC_NAMES if t not in topics]
                if free:
                    topics[free[0]] = data.draw(ints(1, 6))
            elif ev == "delete_topic" and len(topics) > 1:
                del topics[data.draw(pick(tuple(sorted(topics))))]
            elif ev == "stale":
                cands = sorted(m for m in subs if len(history[m]) >= 2)
                if cands:
                    stale.add(data.draw(pick(tuple(cands))))
        members = {}
        for m in subs:
            if m in stale:
                g, o = history[m][-2]  # rejoins with what it had two rounds ago
            else:
                g, o = gen, owned[m]
            members[m] = Member(subs[m], o, g if (o or history[m]) else -1)
        note(f"round {rnd}: events={events} stale={sorted(stale)} topics={topics} members={members}")
        result = assign(strategy, members, topics, **kw)
        note(f"round {rnd}: result={result}")
        withheld = check_round(strategy, members, topics, result)
        if strategy in COOPERATIVE and not events and not stale:
            # Everybody resubmitted last round's result at the next generation: the cooperative
            # follow-up round must be complete (convergence in <= 2 rounds).
            assert not withheld, f"withheld {sorted(withheld)} on a pure resubmission round"
        for m in subs:
            history[m].append((gen, list(result[m])))
            owned[m] = list(result[m])
        gen += 1
    if strategy in STICKY:
        members = {m: Member(subs[m], owned[m], gen - 1) for m in subs}
        O.check_convergence(_fn(strategy, **kw), members, topics, {m: owned[m] for m in subs}, gen)
    count("churn", strategy)


# --------------------------------------------------------------------------------------------
# Generation conflicts and stale generations, targeted
# --------------------------------------------------------------------------------------------


@st.composite
def conflicted_groups(draw):
    """Every partition of a small table claimed by 1-3 members at close generations."""
    topics = draw(topic_table(3, 6))
    n = draw(ints(2, 6))
    ids = draw(subset(tuple(MEMBER_IDS), n, n))
    uniform = draw(BOOLS)
    names = sorted(topics)
    subs = {m: (names if uniform else draw(subset(tuple(names), 1))) for m in ids}
    gens = {m: draw(ints(3, 5)) for m in ids}
    owned = {m: [] for m in ids}
    for t, c in topics.items():
        for p in range(c + draw(ints(0, 1))):  # sometimes one out-of-range index too
            for m in draw(subset(tuple(ids), 0, 3)):
                owned[m].append((t, p))
    return {m: Member(subs[m], owned[m], gens[m]) for m in ids}, topics


@pytest.mark.parametrize("strategy", STRATEGIES)
@budget(0.25, len(STRATEGIES))
@given(group=conflicted_groups(), seed=ints(0, 2**32))
def test_generation_conflicts(strategy, group, seed):
    members, topics = group
    kw = {"lags": {}} if strategy == "lag-aware" else {}
    result = assign(strategy, members, topics, **kw)
    check_round(strategy, members, topics, result)
    O.check_deterministic(_fn(strategy, **kw), members, topics, random.Random(seed), baseline=result, tries=1)
    if strategy in STICKY:
        O.check_convergence(_fn(strategy, **kw), members, topics, result, 6)
    count("conflicts", strategy)


# --------------------------------------------------------------------------------------------
# Racks (rack-aware sticky strategies)
# --------------------------------------------------------------------------------------------

RACKS = ["r0", "r1", "r2"]


@pytest.mark.parametrize("strategy", STICKY_PRESENT)
@budget(0.04)
@given(data=st.data())
def test_racks_keep_balance_and_validity(strategy, data):
    members, topics = data.draw(groups(max_members=6, max_topics=3, max_partitions=8))
    members = {
        m: Member(x.topics, x.owned_partitions, x.generation, rack=data.draw(pick((*RACKS, None))))
        for m, x in members.items()
    }
    racks = {(t, p): data.draw(subset(tuple(RACKS), 0, 2)) for t, n in topics.items() for p in range(n)}
    result = assign(strategy, members, topics, partition_racks=racks)
    O.check_validity(members, topics, result)
    withheld = O.check_withholding_justified(members, topics, result) if strategy in COOPERATIVE else set()
    if strategy in COOPERATIVE:
        O.check_cooperative_safety(O.raw_owned(members), result)
    else:
        O.check_completeness(members, topics, result)
    if not withheld:
        if O.is_uniform(members, topics):
            O.check_uniform_balance(result)
        else:
            O.check_optimal_balance(members, topics, result)
    O.check_convergence(lambda ms, ts: assign(strategy, ms, ts, partition_racks=racks), members, topics, result, 100)
    count("racks", strategy)


@pytest.mark.parametrize("strategy", STICKY_PRESENT)
@budget(0.04)
@given(data=st.data())
def test_racks_on_every_partition_change_nothing(strategy, data):
    """KIP-881: rack logic applies only if not every partition has a replica on every rack."""
    members, topics = data.draw(groups(max_members=6, max_topics=3, max_partitions=8))
    members = {
        m: Member(x.topics, x.owned_partitions, x.generation, rack=data.draw(pick((*RACKS, None))))
        for m, x in members.items()
    }
    everywhere = data.draw(subset(tuple(RACKS), 1))
    racks = {(t, p): list(everywhere) for t, n in topics.items() for p in range(n)}
    plain = assign(strategy, members, topics)
    with_racks = assign(strategy, members, topics, partition_racks=racks)
    assert O.as_sets(with_racks) == O.as_sets(plain)
    count("racks_everywhere", strategy)
