"""kassign.quality (the core's metrics, rust/core/src/fleet/metrics.rs) against its former Python
implementation (oracles/quality.py) on random groups and random assignments, valid or not:
unknown members, members missing from the result, partitions given twice, out of range, of
unknown or unsubscribed topics; with and without lags, replica racks and a previous owner map."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kassign import Member, TopicPartition, quality
from oracles import quality as oracle

TOPICS = ["t", "u", "v"]
IDS = ["m0", "m1", "m2", "m3"]
RACKS = [None, "", "a", "b"]
keys = st.tuples(st.sampled_from([*TOPICS, "w"]), st.integers(-1, 5))


@st.composite
def groups(draw):
    ids = draw(st.lists(st.sampled_from(IDS), min_size=0, max_size=4, unique=True))
    members = {
        mid: Member(
            draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True)),
            owned_partitions=draw(st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(0, 5)), max_size=4)),
            generation=draw(st.integers(-1, 3)),
            rack=draw(st.sampled_from(RACKS)) or None,
        )
        for mid in ids
    }
    ppt = draw(st.dictionaries(st.sampled_from([*TOPICS, "x"]), st.integers(0, 5)))
    assignment = draw(
        st.dictionaries(
            st.sampled_from([*IDS, "stranger"]),
            st.lists(keys.map(lambda k: TopicPartition(*k)), max_size=6),
        )
    )
    lags = draw(st.none() | st.dictionaries(keys, st.integers(0, 10**6)))
    racks = draw(st.none() | st.dictionaries(keys, st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)))
    previous = draw(st.none() | st.dictionaries(keys, st.sampled_from([*IDS, "stranger"])))
    return members, ppt, assignment, lags, racks, previous


@given(groups())
def test_every_metric_equals_the_python_reference(g):
    members, ppt, assignment, lags, racks, previous = g
    prev = previous if previous is not None else oracle.previous_owners(members)
    assert quality.counts(assignment) == oracle.counts(assignment)
    assert quality.count_spread(assignment) == oracle.count_spread(assignment)
    assert quality.member_lags(assignment, lags) == oracle.member_lags(assignment, lags)
    assert quality.lag_ratio_bound(members, ppt, lags) == oracle.lag_ratio_bound(members, ppt, lags)
    assert quality.assignable_partitions(members, ppt) == oracle.assignable_partitions(members, ppt)
    assert quality.moves(prev, assignment, members, ppt) == oracle.moves(prev, assignment, members, ppt)
    assert quality.rack_locality(assignment, members, racks) == oracle.rack_locality(assignment, members, racks)
    assert quality.violations(assignment, members, ppt) == oracle.violations(assignment, members, ppt)
    kw = {"lags": lags, "partition_racks": racks, "previous": previous}
    assert (
        quality.evaluate(members, ppt, assignment, **kw).as_dict()
        == oracle.evaluate(members, ppt, assignment, **kw).as_dict()
    )


@given(groups(), st.none() | st.integers(0, 30), st.none() | st.floats(1.0, 5.0))
def test_evaluate_with_precomputed_group_values(g, assignable, bound):
    members, ppt, assignment, lags, racks, _ = g
    kw = {"lags": lags, "partition_racks": racks, "assignable": assignable, "lag_bound": bound}
    assert (
        quality.evaluate(members, ppt, assignment, **kw).as_dict()
        == oracle.evaluate(members, ppt, assignment, **kw).as_dict()
    )


@given(st.floats(-10, 10), st.floats(-10, 10))
def test_ratio(top, mean):
    assert quality.ratio(top, mean) == oracle.ratio(top, mean)
