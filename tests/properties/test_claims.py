"""The claim rule (rust/core/src/claims.rs) through ``_core``: equal to the Python derivations it
replaced, on random histories, and to the rule as stated.

The functions ``old_*`` are the Python code that shipped before the rule moved into the core
(``kassign.assignors.lag_aware._previous_owners`` / ``_owned_by_topic`` and
``kassign.quality.previous_owners``), kept here as the oracle of the move. The sticky strategies
read the rule through ``_core.sticky_inputs`` (with the subscribers, from one read of the group).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import groups, lags_for

from kassign import Member, _core, quality
from kassign.assignors._greedy import Inputs


def old_previous_owners(members):
    best = {}
    for mid, m in members.items():
        gen = m.generation
        for tp in m.owned_partitions:
            key = (tp[0], tp[1])
            cur = best.get(key)
            if cur is None or gen > cur[0]:
                best[key] = (gen, mid)
            elif gen == cur[0] and cur[1] != mid:
                best[key] = (gen, None)
    return {k: owner for k, (_, owner) in best.items() if owner is not None}


def old_owned_by_topic(members, partitions_per_topic):
    inputs = Inputs(members, partitions_per_topic)
    subs = inputs.subs
    index = {m: i for i, m in enumerate(inputs.ids)}
    best = {}
    for mid, m in members.items():
        gen = m.generation
        i = index[mid]
        for tp in m.owned_partitions:
            key = (tp[0], tp[1])
            cur = best.get(key)
            if cur is None or gen > cur[0]:
                best[key] = (gen, i)
            elif gen == cur[0] and cur[1] != i:
                best[key] = (gen, -1)
    by_topic = {}
    for (t, p), (_, i) in best.items():
        if i < 0 or subs.get(t) is None or not 0 <= p < partitions_per_topic[t]:
            continue
        by_topic.setdefault(t, {}).setdefault(i, []).append(p)
    return by_topic


def stated_rule(members):
    """Per key: the one distinct member at the highest generation, else no owner."""
    claims = {}
    for mid, m in members.items():
        for tp in m.owned_partitions:
            claims.setdefault((tp[0], tp[1]), set()).add((m.generation, mid))
    out = {}
    for key, cs in claims.items():
        top = max(g for g, _ in cs)
        at_top = {mid for g, mid in cs if g == top}
        if len(at_top) == 1:
            out[key] = at_top.pop()
    return out


def sorted_lists(d):
    return {t: {i: sorted(ps) for i, ps in by.items()} for t, by in d.items()}


@settings(max_examples=400, deadline=None)
@given(groups())
def test_previous_owners_equals_the_old_python_and_the_stated_rule(group):
    members, _topics = group
    new = _core.previous_owners(members)
    assert new == old_previous_owners(members) == stated_rule(members)
    assert list(new) == list(old_previous_owners(members))  # same key order
    assert quality.previous_owners(members) == new


@settings(max_examples=400, deadline=None)
@given(groups())
def test_previous_by_topic_equals_the_old_python(group):
    members, topics = group
    old = old_owned_by_topic(members, topics)
    _, new = _core.sticky_inputs(members, topics)
    assert new == sorted_lists(old)
    assert Inputs(members, topics).read_previous() == new


@settings(max_examples=200, deadline=None)
@given(groups(), st.data(), st.sampled_from(["proposal", "per-topic"]))
def test_lag_aware_sticky_unchanged_on_random_histories(group, data, mode):
    """The sticky mode reads the core's previous owners: its result equals the one computed
    from the old Python derivation."""
    from kassign.assignors import lag_aware

    members, topics = group
    lags = data.draw(lags_for(topics))
    inputs = Inputs(members, topics, lags)
    old_inputs = Inputs(members, topics, lags).with_previous(old_owned_by_topic(members, topics))
    options = lag_aware.parse_options({"sticky": True, "mode": mode})
    new = lag_aware.owners_of(inputs, options)
    old = lag_aware.owners_of(old_inputs, options)
    assert new == old


def test_tie_at_the_top_generation_leaves_no_owner_and_a_lone_stale_claim_wins():
    members = {
        "a": Member(["t"], [("t", 0), ("t", 1)], 4),
        "b": Member(["t"], [("t", 0)], 4),
        "c": Member(["t"], [("t", 0), ("t", 2)], 2),
        "d": Member(["t"], [("gone", 0), ("t", 9)], 1),
    }
    assert _core.previous_owners(members) == {("t", 1): "a", ("t", 2): "c", ("gone", 0): "d", ("t", 9): "d"}
    # "gone" has no metadata, t-9 is out of range: only valid, subscribed partitions
    assert _core.sticky_inputs(members, {"t": 3}) == ({"t": (0, 1, 2, 3)}, {"t": {0: [1], 2: [2]}})
