"""``_core.sticky_inputs``: one read of the group gives the sticky Python strategies the subscribers
of each topic and the previous owners.

It replaced two reads (``_core.subscribers_by_topic`` over the members' topics, then
``_core.previous_by_topic`` over the members); before the second was removed, this file compared
the two paths on 1500 random groups each (dicts and their order, tuple sharing, exceptions, and
lag-aware's sticky owners and statistics) and found them equal. Now it holds the one read against
the Python oracles: the eligible sets of ``tests/support/lag_aware_oracle.py`` (order and sharing
included), the claim rule of ``test_claims.py``, and ``kassign.assign``'s own reading of the group
for the errors.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_claims import old_owned_by_topic, sorted_lists

from kassign import Member, TopicPartition, _core
from support import lag_aware_oracle as oracle

TOPICS = ["t0", "t1", "b", "a", "Z", "é", "topic-10", "topic-9", "\u4e2d", "x" * 40]
IDS = ["m1", "m10", "m2", "a", "Á", "c-0", "zz", "b_1", "\U0001f600", "", "c-10", "x"]


@st.composite
def group(draw):
    """(members, partitions_per_topic): random subscriptions (topics with and without metadata,
    with 0 partitions), shared and separate subscription tuples, random history."""
    known = draw(st.lists(st.sampled_from(TOPICS), unique=True, max_size=6))
    ppt = {t: draw(st.integers(0, 9)) for t in known}
    names = TOPICS[:8]
    ids = draw(st.lists(st.sampled_from(IDS), unique=True, min_size=1, max_size=9))
    shared = draw(st.lists(st.sampled_from(names), max_size=4))
    members = {}
    for mid in ids:
        topics = shared if draw(st.booleans()) else draw(st.lists(st.sampled_from(names), max_size=5))
        owned = draw(st.lists(st.tuples(st.sampled_from(names + ["gone"]), st.integers(-1, 11)), max_size=10))
        members[mid] = Member(topics, owned, draw(st.integers(-1, 4)))
    return members, ppt


def sharing(subs):
    """Which topics share one tuple object, as topic groups in order."""
    first = {}
    return [first.setdefault(id(s), t) for t, s in subs.items()]


@settings(max_examples=300, deadline=None)
@given(group())
def test_subscribers_and_claims_equal_the_oracles(g):
    members, ppt = g
    ids = sorted(members)
    want_subs = oracle.subscribers_by_topic(ids, [members[i].topics for i in ids], ppt)
    subs, previous = _core.sticky_inputs(members, ppt)
    assert list(subs.items()) == list(want_subs.items())
    assert sharing(subs) == sharing(want_subs)
    want_previous = sorted_lists(old_owned_by_topic(members, ppt))
    assert previous == want_previous
    assert list(previous) == sorted(previous)  # topics ascending
    for by_member in previous.values():
        assert list(by_member) == sorted(by_member)  # members ascending


BAD_VALUES = [None, 1, "m", Member(["t0"]), ("t0",)]
BAD_COUNTS = [-1, 2**31, 2**31 - 1, True, 1.0, "3", None, 0, 4]


@st.composite
def bad_group(draw):
    """Inputs of which many are invalid: wrong types, lone surrogates, bad or huge counts."""
    members = {}
    for _ in range(draw(st.integers(0, 5))):
        key = draw(st.sampled_from(["a", "b", "\ud800", 7, b"c", "d"]))
        members[key] = draw(st.sampled_from(BAD_VALUES))
    if draw(st.booleans()):
        members = draw(st.sampled_from([members, list(members), None, 3]))
    ppt = {}
    for _ in range(draw(st.integers(0, 4))):
        ppt[draw(st.sampled_from(["t0", "b", "\udc00", 5]))] = draw(st.sampled_from(BAD_COUNTS))
    if draw(st.integers(0, 5)) == 0:
        ppt = draw(st.sampled_from([None, ["t0"], 4]))
    return members, ppt


def outcome(f, *args):
    try:
        return ("ok", f(*args))
    except Exception as e:
        return (type(e), str(e))


@settings(max_examples=300, deadline=None)
@given(bad_group())
def test_errors_are_kassign_assigns_errors(g):
    """The group is read as ``kassign.assign`` reads it for a Rust strategy: the same checks,
    the same exceptions."""
    members, ppt = g
    was = outcome(_core.assign, "range", members, ppt, None, TopicPartition)
    now = outcome(_core.sticky_inputs, members, ppt)
    assert (now[0] == "ok") == (was[0] == "ok")
    if now[0] != "ok":
        assert now == was
