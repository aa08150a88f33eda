"""``_core.sticky_inputs`` (one read of the group: the subscribers per topic and the previous owners)
against the two reads it replaces: ``_core.subscribers_by_topic`` over the members' topics and
``_core.previous_by_topic`` over the members. Same dicts in the same order, the same tuple sharing,
the same exceptions; and lag-aware's sticky mode gives the same owners and statistics either way.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import lags_for

from kassign import Member, _core
from kassign.assignors import lag_aware
from kassign.assignors._greedy import Inputs

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


def old(members, ppt):
    ids = sorted(members)
    subs = _core.subscribers_by_topic([members[i].topics for i in ids], ppt)
    return subs, _core.previous_by_topic(members, ppt)


def sharing(subs):
    """Which topics share one tuple object, as topic groups in order."""
    first = {}
    return [first.setdefault(id(s), t) for t, s in subs.items()]


@settings(max_examples=1500, deadline=None)
@given(group())
def test_one_read_equals_the_two_reads(g):
    members, ppt = g
    old_subs, old_prev = old(members, ppt)
    new_subs, new_prev = _core.sticky_inputs(members, ppt)
    assert list(new_subs.items()) == list(old_subs.items())
    assert sharing(new_subs) == sharing(old_subs)
    assert list(new_prev.items()) == list(old_prev.items())
    for t in new_prev:
        assert list(new_prev[t].items()) == list(old_prev[t].items())


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
    except Exception as e:  # noqa: BLE001 - the comparison is of any exception, type and text
        return (type(e), str(e))


@settings(max_examples=1500, deadline=None)
@given(bad_group())
def test_errors_are_the_old_reads_errors(g):
    members, ppt = g
    was = outcome(_core.previous_by_topic, members, ppt)
    now = outcome(_core.sticky_inputs, members, ppt)
    if was[0] == "ok" or now[0] == "ok":
        assert was[0] == now[0] == "ok"
        assert now[1][1] == was[1]
    else:
        assert now == was


@settings(max_examples=400, deadline=None)
@given(group(), st.data(), st.sampled_from(["proposal", "per-topic"]), st.sampled_from([0, 1]))
def test_lag_aware_sticky_unchanged(g, data, mode, skew):
    members, ppt = g
    lags = data.draw(lags_for(ppt))
    options = lag_aware.parse_options({"sticky": True, "mode": mode, "max_skew": skew})
    old_subs, old_prev = old(members, ppt)
    before = Inputs(members, ppt, lags, subs=old_subs).with_previous(old_prev)
    after = Inputs(members, ppt, lags)
    was = lag_aware._solve(before, options)
    now = lag_aware._solve(after, options)
    assert now[0] == was[0]
    assert list(now[1].items()) == list(was[1].items())
    assert now[2] == was[2]
