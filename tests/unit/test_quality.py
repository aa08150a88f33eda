"""kassign.quality: the metrics on hand-computed assignments."""

import pytest

from kassign import Member, TopicPartition, quality

TP = TopicPartition


def test_counts_spread_and_ratio():
    a = {"a": [TP("t", 0), TP("t", 1), TP("t", 2)], "b": [TP("t", 3)], "c": []}
    assert quality.counts(a) == [3, 1, 0]
    assert quality.count_spread(a) == 3
    assert quality.count_spread({}) == 0
    assert quality.ratio(3, 4 / 3) == pytest.approx(2.25)
    assert quality.ratio(0, 0) is None


def test_member_lags_missing_partitions_count_zero():
    a = {"a": [TP("t", 0), TP("t", 1)], "b": [TP("t", 2)]}
    assert quality.member_lags(a, {("t", 0): 5, ("t", 2): 7}) == {"a": 5, "b": 7}
    assert quality.member_lags(a, None) == {"a": 0, "b": 0}


def test_previous_owners_highest_generation_wins_and_ties_drop():
    members = {
        "a": Member(["t"], owned_partitions=[("t", 0), ("t", 1)], generation=5),
        "b": Member(["t"], owned_partitions=[("t", 1), ("t", 2)], generation=4),
        "c": Member(["t"], owned_partitions=[("t", 2), ("t", 3)], generation=4),
        "d": Member(["t"], owned_partitions=[("t", 3)], generation=7),
    }
    prev = quality.previous_owners(members)
    # t-1: a (gen 5) beats b (gen 4); t-2: b and c tie at 4 -> no owner; t-3: d (7) beats c (4)
    assert prev == {("t", 0): "a", ("t", 1): "a", ("t", 3): "d"}


def test_moves_only_counts_assignable_partitions():
    members = {
        "a": Member(["t"], owned_partitions=[("t", 0), ("t", 1), ("gone", 0), ("t", 9)], generation=1),
        "b": Member(["t"], owned_partitions=[("t", 2)], generation=1),
    }
    partitions_per_topic = {"t": 4, "gone": 1}  # "gone" exists but nobody subscribes; t-9 is out of range
    prev = quality.previous_owners(members)
    new = {"a": [TP("t", 0)], "b": [TP("t", 1), TP("t", 2), TP("t", 3)]}
    assert quality.moves(prev, new, members, partitions_per_topic) == (1, 2)  # t-1 moved; t-0, t-2 kept
    # a withheld partition (cooperative) counts as leaving its owner
    withheld = {"a": [TP("t", 0)], "b": [TP("t", 2), TP("t", 3)]}
    assert quality.moves(prev, withheld, members, partitions_per_topic) == (1, 2)


def test_rack_locality():
    members = {"a": Member(["t"], rack="r1"), "b": Member(["t"], rack="r2"), "c": Member(["t"])}
    a = {"a": [TP("t", 0), TP("t", 1)], "b": [TP("t", 2), TP("t", 3)], "c": [TP("t", 4)]}
    racks = {("t", 0): ["r1", "r2"], ("t", 1): ["r2"], ("t", 2): ["r2", "r3"], ("t", 4): ["r1"]}
    # eligible: t0 (a, local), t1 (a, remote), t2 (b, local); t3 has no racks, c has no rack
    assert quality.rack_locality(a, members, racks) == (2, 3)
    assert quality.rack_locality(a, members, None) == (0, 0)


def test_violations():
    members = {"a": Member(["t"]), "b": Member(["u"])}
    partitions_per_topic = {"t": 2, "u": 1}
    assert quality.violations({"a": [TP("t", 0), TP("t", 1)], "b": [TP("u", 0)]}, members, partitions_per_topic) == 0
    # a does not subscribe to u; b gets u-0 a second time
    assert quality.violations({"a": [TP("t", 0), TP("u", 0)], "b": [TP("u", 0)]}, members, partitions_per_topic) == 2
    assert quality.violations({"a": [TP("t", 0), TP("t", 0), TP("t", 5)], "b": []}, members, partitions_per_topic) == 2
    assert quality.violations({"a": [TP("t", 0)]}, members, partitions_per_topic) == 1  # b missing


def test_lag_ratio_bound_one_hot_partition():
    members = {"a": Member(["t"]), "b": Member(["t"])}
    lags = {("t", 0): 90, ("t", 1): 5, ("t", 2): 5, ("x", 0): 1000}  # x: nobody subscribes
    # total 100 over 2 members: mean 50; the hot partition alone is 90 -> bound 1.8
    assert quality.lag_ratio_bound(members, {"t": 3, "x": 1}, lags) == pytest.approx(1.8)
    assert quality.lag_ratio_bound(members, {"t": 3}, {("t", 0): 0}) is None


def test_evaluate_on_the_lag_aware_proposal_example():
    # docs/strategies/lag-aware.md: C0 [p0] 100000, C1 [p1, p2] 110000
    members = {
        "C0": Member(["t0"], owned_partitions=[("t0", 0), ("t0", 1)], generation=1, rack="r1"),
        "C1": Member(["t0"], owned_partitions=[("t0", 2)], generation=1, rack="r2"),
    }
    lags = {("t0", 0): 100000, ("t0", 1): 60000, ("t0", 2): 50000}
    racks = {("t0", 0): ["r1"], ("t0", 1): ["r1"], ("t0", 2): ["r1"]}
    a = {"C0": [TP("t0", 0)], "C1": [TP("t0", 1), TP("t0", 2)]}
    q = quality.evaluate(members, {"t0": 3}, a, lags=lags, partition_racks=racks)
    assert (q.members, q.partitions, q.assigned, q.unassigned) == (2, 3, 3, 0)
    assert (q.min_count, q.max_count, q.count_spread) == (1, 2, 1)
    assert q.count_ratio == pytest.approx(2 / 1.5)
    assert q.max_member_lag == 110000 and q.mean_member_lag == 105000
    assert q.lag_ratio == pytest.approx(110000 / 105000)
    assert q.lag_ratio_bound == pytest.approx(1.0)
    assert q.lag_imbalanced is False
    assert (q.moves, q.kept) == (1, 2)  # t0-1 moved from C0 to C1
    assert (q.rack_local, q.rack_eligible) == (1, 3)
    assert q.violations == 0
    # Range's answer for the same group: C0 [p0, p1] 160000, C1 [p2] 50000 -> flagged
    r = quality.evaluate(members, {"t0": 3}, {"C0": [TP("t0", 0), TP("t0", 1)], "C1": [TP("t0", 2)]}, lags=lags)
    assert r.lag_ratio == pytest.approx(160000 / 105000) and r.lag_imbalanced is True
    assert (r.moves, r.kept) == (0, 3)
