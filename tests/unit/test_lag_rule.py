"""The lag rule (rust/core/src/lag.rs) through ``_core``: equal to the Python implementations it
replaced (``kassign.lag.next_offset`` / ``compute_lag`` and
``kassign.fleet.group._local_partition_lag`` before the move, now
``oracles.fleet_group.core_partition_lag``) on random
offsets, over the whole int64 range."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kassign import _core
from kassign.lag import compute_lag, compute_lags, next_offset
from oracles.fleet_group import core_partition_lag


def old_next_offset(committed, begin, end, auto_offset_reset="latest"):
    b = begin if begin is not None else 0
    e = end if end is not None else 0
    if committed is not None and committed >= 0:
        return max(committed, b)
    return e if auto_offset_reset.lower() == "latest" else b


def old_compute_lag(committed, begin, end, auto_offset_reset="latest"):
    e = end if end is not None else 0
    return max(e - old_next_offset(committed, begin, end, auto_offset_reset), 0)


INT64 = st.integers(-(2**63), 2**63 - 1)
OFFSET = st.none() | INT64 | st.integers(-3, 20)
RESET = st.sampled_from(["latest", "LATEST", "Latest", "earliest", "none", "", "latest "])


@settings(max_examples=2000, deadline=None)
@given(OFFSET, OFFSET, OFFSET, RESET)
def test_lag_rule_equals_the_python_it_replaced(committed, begin, end, reset):
    want_next = old_next_offset(committed, begin, end, reset)
    want = old_compute_lag(committed, begin, end, reset)
    assert _core.next_offset(committed, begin, end, reset) == want_next
    assert _core.compute_lag(committed, begin, end, reset) == want
    assert next_offset(committed, begin, end, reset) == want_next
    assert compute_lag(committed, begin, end, reset) == want
    assert core_partition_lag(committed, begin, end, reset) == want
    assert compute_lags([("t", 0)], {("t", 0): committed}, {("t", 0): begin}, {("t", 0): end}, reset) == {
        ("t", 0): want
    }
