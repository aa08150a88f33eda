"""``server-kassign``: the computation of kassign's broker plugin (``java/broker/``, issue 27), from
Python, judged by independent oracles (tests/support/oracles.py):

* valid and complete;
* the most balanced load vector the subscriptions allow (no cost-reducing path; the sum of squared
  loads equals the min-cost-flow optimum), hence never less balanced than ``server-uniform``;
* among those, the most partitions kept from the current target assignment (``owned_partitions``;
  a partition two members hold counts as held by nobody; generations are ignored);
* rack locality never bought with balance or kept partitions; and, where the group has a rack
  choice to make, at least uniform's locality when both plans keep the same;
* the result does not depend on the order of the inputs.

tests/broker/test_broker_plugin.py checks that the broker plugin computes exactly this.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign import Member
from support import oracles as O


@st.composite
def groups(draw, racks: bool = False):
    n_topics = draw(st.integers(1, 4))
    topics = {f"t{i}": draw(st.integers(0, 10)) for i in range(n_topics)}
    names = sorted(topics)
    n = draw(st.integers(1, 7))
    ids = draw(st.lists(st.text("abcdef0123", min_size=1, max_size=6), min_size=n, max_size=n, unique=True))
    homo = draw(st.booleans())
    common = sorted(draw(st.sets(st.sampled_from(names), min_size=1)))
    subs = {m: common if homo else sorted(draw(st.sets(st.sampled_from(names), min_size=0))) for m in ids}
    owned: dict[str, list] = {m: [] for m in ids}
    for t in names:
        for p in range(topics[t] + 1):  # one index past the end: odd history
            if draw(st.booleans()):
                for m in draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2)):  # overlaps too
                    owned[m].append((t, p))
    member_rack = {m: (draw(st.sampled_from(["a", "b", "c", None])) if racks else None) for m in ids}
    members = {
        m: Member(subs[m], owned_partitions=owned[m], generation=draw(st.integers(-1, 3)), rack=member_rack[m])
        for m in ids
    }
    partition_racks = (
        {(t, p): draw(st.sets(st.sampled_from("abc"), min_size=1, max_size=2)) for t in names for p in range(topics[t])}
        if racks
        else None
    )
    return members, topics, partition_racks


def _same_generation(members):
    """The server rule ignores generations: the oracle sees every claim at one generation."""
    return {
        m: Member(v.topics, owned_partitions=v.owned_partitions, rack=v.rack, group_instance_id=v.group_instance_id)
        for m, v in members.items()
    }


@settings(max_examples=200, deadline=None)
@given(groups())
def test_optimal_balance_then_most_kept(group):
    members, topics, _ = group
    result = kassign.assign("server-kassign", members, topics)
    flat = _same_generation(members)
    O.check_validity(flat, topics, result)
    O.check_completeness(flat, topics, result)
    O.check_optimal_balance(flat, topics, result)
    O.check_optimal_stickiness(flat, topics, result)
    uniform = kassign.assign("server-uniform", members, topics)
    assert O.sum_of_squares(result) <= O.sum_of_squares(uniform)
    # Generations do not matter.
    assert kassign.assign("server-kassign", flat, topics) == result


@settings(max_examples=150, deadline=None)
@given(groups(racks=True))
def test_racks_never_cost_balance_or_kept(group):
    members, topics, partition_racks = group
    result = kassign.assign("server-kassign", members, topics, partition_racks=partition_racks)
    flat = _same_generation(members)
    O.check_validity(flat, topics, result)
    O.check_completeness(flat, topics, result)
    O.check_optimal_stickiness(flat, topics, result)
    O.check_deterministic(
        lambda m, t: kassign.assign("server-kassign", m, t, partition_racks=partition_racks),
        members,
        topics,
        random.Random(len(members)),
        baseline=result,
    )


def test_fresh_rack_group_is_fully_local():
    # Three racks, one replica per partition, a member per rack: every partition on its own rack.
    topics = {"t": 9}
    racks = {("t", p): ["bca"[p % 3]] for p in range(9)}  # not what a plain deal gives
    members = {f"m{r}": Member(["t"], rack=r) for r in "abc"}
    result = kassign.assign("server-kassign", members, topics, partition_racks=racks)
    loc = O.rack_locality(members, result, racks)
    assert loc == {"local": 9, "mismatch": 0, "unknown": 0}
    uniform = kassign.assign("server-uniform", members, topics)
    assert O.rack_locality(members, uniform, racks)["local"] < 9
    assert O.loads(result) == O.loads(uniform)


def test_listed_in_strategies():
    assert "server-kassign" in kassign.STRATEGIES
