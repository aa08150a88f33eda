"""Properties of ``server-uniform`` / ``server-range`` judged by independent oracles (issue 16).

The differential test (peers/server_diff.py) compares with the Java classes; these properties hold
whatever Java does and need no JVM:

* ``server-range`` equals kassign's classic ``range`` without rack data (both are Apache Kafka's
  range rule over member order; classic ``range`` is checked against Java's ``RangeAssignor`` in
  tests/support/java_diff.py) and ignores the current assignment.
* ``server-uniform`` on a homogeneous group with a non-overlapping current assignment: valid,
  complete, max - min <= 1, and it keeps exactly kept* = sum(min(h_i, q)) + min(r, #{h_i >= q+1})
  partitions (the most any balanced plan can keep; oracles.uniform_kept_bound).
* ``server-uniform`` on any group: valid and complete, and balanced within every topic's
  subscribers (the heterogeneous builder's guarantee: no topic has two subscribers whose loads
  differ by more than one while the heavier holds a partition of that topic), unless the 16-round
  limit stops it (not reached at these sizes).
* both: the result does not depend on the order members are given in.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

import kassign
from kassign import Member
from support import oracles as O


@st.composite
def groups(draw, homogeneous: bool | None = None):
    n_topics = draw(st.integers(1, 4))
    topics = {f"t{i}": draw(st.integers(0, 12)) for i in range(n_topics)}
    names = sorted(topics)
    n = draw(st.integers(1, 7))
    ids = draw(st.lists(st.text("abcdef0123", min_size=1, max_size=6), min_size=n, max_size=n, unique=True))
    homo = draw(st.booleans()) if homogeneous is None else homogeneous
    common = sorted(draw(st.sets(st.sampled_from(names), min_size=1)))
    subs = {m: common if homo else sorted(draw(st.sets(st.sampled_from(names), min_size=1))) for m in ids}
    # A non-overlapping current assignment (as the coordinator keeps it), possibly partial/skewed.
    owned: dict[str, list] = {m: [] for m in ids}
    for t in names:
        for p in range(topics[t]):
            if draw(st.booleans()):
                owned[draw(st.sampled_from(ids))].append((t, p))
    static = draw(st.booleans())
    members = {
        m: Member(subs[m], owned_partitions=owned[m], group_instance_id=(f"i-{m}" if static and k % 2 == 0 else None))
        for k, m in enumerate(ids)
    }
    return members, topics


def _loads(result):
    return {m: len(v) for m, v in result.items()}


@settings(max_examples=150, deadline=None)
@given(groups())
def test_server_range_is_range_without_racks(group):
    members, topics = group
    got = kassign.assign("server-range", members, topics)
    assert got == kassign.assign("range", members, topics)
    fresh = {m: Member(v.topics, group_instance_id=v.group_instance_id) for m, v in members.items()}
    assert kassign.assign("server-range", fresh, topics) == got  # history is ignored


@settings(max_examples=150, deadline=None)
@given(groups(homogeneous=True))
def test_server_uniform_homogeneous_is_balanced_and_keeps_the_most(group):
    members, topics = group
    result = kassign.assign("server-uniform", members, topics)
    O.check_validity(members, topics, result)
    O.check_completeness(members, topics, result)
    loads = _loads(result)
    assert max(loads.values()) - min(loads.values()) <= 1
    resolved = O.resolve_ownership(members, topics)
    total = len(O.expected_partitions(members, topics))
    assert O.kept_count(resolved, result) == O.uniform_kept_bound(resolved, total, len(members))


@settings(max_examples=150, deadline=None)
@given(groups(homogeneous=False))
def test_server_uniform_balances_every_topic(group):
    members, topics = group
    result = kassign.assign("server-uniform", members, topics)
    O.check_validity(members, topics, result)
    O.check_completeness(members, topics, result)
    loads = _loads(result)
    owner = {tp: m for m, tps in result.items() for tp in tps}
    for t, n in topics.items():
        subs = [m for m, v in members.items() if t in v.topics]
        if len(subs) < 2:
            continue
        lo = min(loads[m] for m in subs)
        for p in range(n):
            holder = owner[(t, p)]
            assert loads[holder] <= lo + 1, (t, p, holder, loads, result)


@settings(max_examples=100, deadline=None)
@given(groups(), st.randoms(use_true_random=False))
def test_member_order_does_not_matter(group, rnd: random.Random):
    members, topics = group
    items = list(members.items())
    rnd.shuffle(items)
    for s in ("server-uniform", "server-range"):
        assert kassign.assign(s, dict(items), topics) == kassign.assign(s, members, topics)
