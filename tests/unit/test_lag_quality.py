"""The lag quality benchmark (peers/lag_quality.py, docs/lag_quality.md): facts that hold by
construction on every input, checked on the benchmark's own seeded Zipf inputs and on random ones.

Nothing here compares two strategies' ratios with each other (which one wins on a given input is
a measurement, not a guarantee); only bounds that are theorems are asserted:

* every complete assignment has max member lag >= the lower bound max(total/N, l1, lN + lN+1);
* LPT (no count constraint) is an assignment too, so it is >= that bound;
* lag-aware default (the proposal's text), equal subscriptions: per-topic count balance and
  max - min member lag <= the largest partition lag (lag-descending rounds over members sorted by
  total lag; improvement exchanges never widen the spread);
* lag-aware per-topic (the prototype): per-topic count balance (max - min <= 1 of each topic), and in every topic
  max - min member lag <= the topic's largest partition lag (partitions are dealt in lag-descending
  rounds in which every member gets exactly one, so member i's k-th partition comes from round k);
* lag-aware global, equal subscriptions: overall count balance and max - min member lag <= the
  largest partition lag (the same round argument over all partitions).
"""

from __future__ import annotations

import random

import pytest

import kassign
from peers import lag_quality as lq
from support import oracles


@pytest.fixture(scope="module")
def data():
    return lq.measure()


def _lower_bound_brute(lags, n):
    """The bound from its definition, written independently of lq.lower_bound."""
    values = sorted(lags.values())
    total = sum(values)
    cands = [total / n, values[-1]]
    if len(values) > n:
        cands.append(values[-n] + values[-n - 1])
    return max(cands)


def test_benchmark_covers_the_issue_rows(data):
    labels = set(next(iter(data.values()))["rows"])
    assert {
        "range",
        "roundrobin",
        "lag-aware (default: proposal)",
        "lag-aware per-topic (prototype)",
        "lag-aware global",
    } <= labels
    if "sticky" in kassign.STRATEGIES:
        assert "sticky (fresh)" in labels
    for cell in data.values():
        assert sum(cell["topics"].values()) == lq.PARTITIONS and len(cell["members"]) == lq.MEMBERS


def test_every_strategy_is_valid_complete_and_above_the_lower_bound(data):
    for (shape, s), cell in data.items():
        bound = cell["bound"]
        assert bound == pytest.approx(_lower_bound_brute(cell["lags"], lq.MEMBERS))
        assert bound <= cell["lpt"] + 1e-9
        for label, result in cell["result"].items():
            oracles.check_validity(cell["members"], cell["topics"], result)
            oracles.check_completeness(cell["members"], cell["topics"], result)
            per = lq.member_lags(result, cell["lags"])
            assert sum(per.values()) == sum(cell["lags"].values())
            assert max(per.values()) >= bound - 1e-9, (shape, s, label)
            assert cell["rows"][label]["ratio"] == pytest.approx(max(per.values()) / cell["mean"])
            if label.startswith("lag-aware") and "global" not in label:  # per-topic count rule
                assert max(per.values()) >= cell["count_bound"], (shape, s, label)


def _per_topic_lag_spread_ok(members, topics, lags, result):
    for t in topics:
        per = {m: sum(lags[(tp[0], tp[1])] for tp in tps if tp[0] == t) for m, tps in result.items()}
        top = max((lags[(t, p)] for p in range(topics[t])), default=0)
        assert max(per.values()) - min(per.values()) <= top, (t, per, top)


def _check_lag_aware(members, topics, lags):
    per_topic = kassign.assign("lag-aware", members, topics, lags=lags, mode="per-topic")
    oracles.check_validity(members, topics, per_topic)
    oracles.check_completeness(members, topics, per_topic)
    oracles.check_per_topic_balance(members, topics, per_topic)
    _per_topic_lag_spread_ok(members, topics, lags, per_topic)

    # The default (the proposal's text): per-topic counts, and with lag carried across topics the
    # rounds argument holds over all topics (a round gives its partitions, lag descending, to the
    # members by total lag ascending, so the spread never exceeds max(previous spread, the largest
    # lag)); each improvement exchange leaves both members strictly between the old min and max.
    for kw in ({}, {"improve": False}):
        default = kassign.assign("lag-aware", members, topics, lags=lags, **kw)
        oracles.check_validity(members, topics, default)
        oracles.check_completeness(members, topics, default)
        oracles.check_per_topic_balance(members, topics, default)
        per = lq.member_lags(default, lags)
        assert max(per.values()) - min(per.values()) <= max(lags.values(), default=0)

    glob = kassign.assign("lag-aware", members, topics, lags=lags, mode="global")
    oracles.check_validity(members, topics, glob)
    oracles.check_completeness(members, topics, glob)
    oracles.check_uniform_balance(glob)
    per = lq.member_lags(glob, lags)
    assert max(per.values()) - min(per.values()) <= max(lags.values(), default=0)


def test_lag_aware_guarantees_on_the_benchmark_inputs(data):
    for cell in data.values():
        _check_lag_aware(cell["members"], cell["topics"], cell["lags"])


@pytest.mark.parametrize("seed", range(20))
def test_lag_aware_guarantees_on_random_zipf_inputs(seed):
    rnd = random.Random(seed)
    n_topics = rnd.randint(1, 12)
    topics = {f"t{i}": rnd.randint(0, 40) for i in range(n_topics)}
    members = lq.group(topics, rnd.randint(1, 30))
    lags = lq.zipf_lags(topics, rnd.choice([0.0, 0.5, 1.0, 1.5, 2.5]), seed)
    _check_lag_aware(members, topics, lags)


def test_count_rule_bound_on_a_hand_example():
    # 2 members, one topic of 4: each holds 2. Lags 9 4 2 1 -> the holder of 9 takes at least the
    # smallest other (1): bound 10; total/2 = 8 and l1 = 9 are weaker.
    lags = {("t", i): v for i, v in enumerate([9, 4, 2, 1])}
    assert lq.count_rule_bound(lags, {"t": 4}, 2) == 10
    got = kassign.assign("lag-aware", lq.group({"t": 4}, 2), {"t": 4}, lags=lags)
    assert max(lq.member_lags(got, lags).values()) == 10


def test_lpt_and_bound_on_a_hand_example():
    # 3 members, lags 7 5 4 3 3 2 (total 24): bound max(8, 7, l3 + l4 = 4 + 3) = 8; LPT:
    # 7 | 5 | 4 -> 3 to 4 (7) -> 3 to 5 (8) -> 2 to 7 (9): max 9.
    lags = {("t", i): v for i, v in enumerate([7, 5, 4, 3, 3, 2])}
    assert lq.lower_bound(lags, 3) == 8
    assert lq.lpt_max(lags, 3) == 9


def test_table_prints_every_row(capsys):
    assert lq.main([]) == 0
    out = capsys.readouterr().out
    for label, strategy, _ in lq.CONTENDERS:
        assert (label in out) == (strategy in kassign.STRATEGIES)
    assert "lower bound" in out and "LPT" in out
