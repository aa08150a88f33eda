"""The Python strategies (``lag-aware`` in every mode, ``fair``, ``failover``) through the public API
against the same strategies written over plain lists with the kernels' Python oracles
(``tests/support/python_strategies_oracle.py``): ``kassign.assign``, ``kassign.assign_owners`` and
``kassign.assign_lag_aware`` must give exactly the oracle's assignment (and statistics) on random
groups, with and without lags, history, skew and priorities."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import groups, lags_for

import kassign
from support import python_strategies_oracle as oracle

LAG_AWARE_OPTIONS = [
    {},
    {"mode": "global"},
    {"mode": "per-topic"},
    {"mode": "per-topic", "improve": True},
    {"improve": False},
    {"sticky": True},
    {"sticky": True, "min_gain": 0.0},
    {"mode": "per-topic", "sticky": True},
    {"max_skew": 1},
    {"mode": "global", "max_skew": 2},
    {"mode": "per-topic", "sticky": True, "max_skew": 1},
]


@settings(max_examples=150, deadline=None)
@given(groups(max_members=10, max_topics=5, max_partitions=24), st.data(), st.sampled_from(["fair", "failover"]))
def test_fair_and_failover_equal_the_oracle(group, data, strategy):
    members, topics = group
    expected = oracle.assign(strategy, members, topics)
    assert kassign.assign(strategy, members, topics) == expected
    assert kassign.assign_owners(strategy, members, topics).to_dict() == expected


@settings(max_examples=250, deadline=None)
@given(groups(max_members=10, max_topics=5, max_partitions=24), st.data(), st.sampled_from(LAG_AWARE_OPTIONS))
def test_lag_aware_equals_the_oracle(group, data, options):
    members, topics = group
    lags = data.draw(st.one_of(st.none(), lags_for(topics)))
    ids, owners, stats = oracle.lag_aware_solve(members, topics, lags, **options)
    expected = oracle._result(members, ids, owners)
    assert kassign.assign("lag-aware", members, topics, lags=lags, **options) == expected
    assert kassign.assign_owners("lag-aware", members, topics, lags=lags, **options).to_dict() == expected
    got = kassign.assign_lag_aware(members, topics, lags=lags, **options)
    assert got.assignment == expected
    assert {k: getattr(got, k) for k in stats} == stats
