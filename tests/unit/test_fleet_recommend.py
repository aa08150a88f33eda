"""The fleet report's per-group recommendation (kassign.fleet.recommend) on hand-built groups: each
case's expected decision is worked out by hand from the rule in docs/fleet.md ("Recommendations"),
not by running the code."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from kassign.fleet import recommend as R

ROOT = Path(__file__).resolve().parents[2]
ORDER = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "lag-aware",
    "fair",
    "failover",
    "server-uniform",
    "server-range",
    "lag-aware:per-topic",
    "lag-aware:global",
    "lag-aware:sticky",
)


def row(lag=None, vs=None, spread=0, moves=0, kept=10, unassigned=0, violations=0, status="ok", error=None):
    return {
        "status": status,
        "error": error,
        "max_member_lag": lag,
        "lag_vs_bound": vs,
        "count_spread": spread,
        "moves": moves,
        "kept": kept,
        "unassigned": unassigned,
        "violations": violations,
    }


def decide(current, rows, group_protocol="classic", user_data=0, members=4):
    return R.decide(current, group_protocol, user_data, members, rows, ORDER)


# -- no decision ---------------------------------------------------------------------------------


def test_consumer_protocol_group_is_left_for_review():
    d = decide("uniform", {"range": row(30000, 3.0)}, group_protocol="consumer")
    assert d["action"] == "review" and "consumer protocol" in d["reason"] and d["recommended"] is None


def test_unknown_or_unmeasured_current_strategy_is_left_for_review():
    assert decide(None, {"range": row(30000, 3.0)})["action"] == "review"
    d = decide("my-custom", {"range": row(30000, 3.0), "sticky": row(10000, 1.0)})
    assert d["action"] == "review" and "'my-custom' was not among the strategies run" in d["reason"]


def test_current_strategy_error_is_left_for_review():
    d = decide("range", {"range": row(status="error", error="duplicate member id"), "sticky": row(10000, 1.0)})
    assert d["action"] == "review" and "duplicate member id" in d["reason"]


def test_failover_groups_keep_it_whatever_the_lag():
    d = decide("failover", {"failover": row(100000, 8.0, spread=12), "sticky": row(10000, 1.0, spread=0)})
    assert d["action"] == "keep" and d["recommended"] == "failover" and d["moves"] == 0


# -- lag -----------------------------------------------------------------------------------------


def test_lag_switch_prefers_the_fewest_moves_among_strategies_at_the_bound():
    # bound = 10000. lag-aware (1.05x) and lag-aware:global (1.0x) are both within 1.10x of
    # the bound: lag-aware moves fewer partitions. sticky cuts the lag by only 1/6 and is not at it.
    rows = {
        "range": row(30000, 3.0, spread=1, moves=0, kept=12),
        "sticky": row(25000, 2.5, moves=0, kept=12),
        "lag-aware": row(10500, 1.05, spread=1, moves=4, kept=8),
        "lag-aware:global": row(10000, 1.0, spread=1, moves=6, kept=6),
    }
    d = decide("range", rows)
    assert d["action"] == "switch" and d["recommended"] == "lag-aware"
    assert d["reason"].startswith("lag:")
    assert d["busiest_lag_current"] == 30000 and d["busiest_lag_recommended"] == 10500
    assert d["lag_gain_pct"] == pytest.approx(65.0)
    assert d["moves"] == 4 and d["moved_pct"] == pytest.approx(100 * 4 / 12)
    assert d["online"] is True
    assert d["how"] == "two rolling bounces: [lag-aware, range], then [lag-aware]"
    assert d["steps"] == "docs/upgrade.md#how-the-broker-picks-the-assignor"


def test_lag_switch_without_a_strategy_at_the_bound_takes_the_lowest_lag():
    rows = {
        "range": row(30000, 3.0),
        "sticky": row(25000, 2.5, moves=0),  # cuts 16.7%
        "roundrobin": row(20000, 2.0, moves=5),  # cuts 33%: the lowest lag
    }
    d = decide("range", rows)
    assert d["action"] == "switch" and d["recommended"] == "roundrobin"
    assert d["lag_gain_pct"] == pytest.approx(100 / 3)


def test_lag_gain_below_ten_percent_keeps_the_current_strategy():
    d = decide("range", {"range": row(30000, 3.0), "sticky": row(27100, 2.71), "roundrobin": row(28000, 2.8)})
    assert d["action"] == "keep" and d["recommended"] == "range"
    assert "no measured strategy cuts its lag by 10%" in d["reason"]
    # exactly 10% less is enough
    d = decide("range", {"range": row(30000, 3.0), "sticky": row(27000, 2.7)})
    assert d["action"] == "switch" and d["recommended"] == "sticky"


def test_caught_up_groups_do_not_switch_for_lag():
    # 3x the bound, but the busiest member has 999 messages: caught up; counts balanced: keep
    d = decide("range", {"range": row(999, 3.0, spread=1), "lag-aware": row(333, 1.0, spread=1)})
    assert d["action"] == "keep" and d["reason"] == "caught up (busiest member's lag 999 < 1,000), max-min 1"
    # 1,000 messages is not caught up
    d = decide("range", {"range": row(1000, 3.0, spread=1), "lag-aware": row(334, 1.0, spread=1)})
    assert d["action"] == "switch" and d["recommended"] == "lag-aware"
    # the count rule still applies to a caught-up group
    d = decide("range", {"range": row(10, 3.0, spread=3), "sticky": row(10, 3.0, spread=1, moves=2)})
    assert d["action"] == "switch" and d["reason"].startswith("count:")


def test_incomplete_invalid_and_failover_rows_are_no_candidates():
    rows = {
        "range": row(30000, 3.0),
        "cooperative-sticky": row(10000, 1.0, unassigned=3),  # withholds partitions: a first round only
        "fair": row(10000, 1.0, violations=1),
        "failover": row(10000, 1.0),
        "lag-aware": row(15000, 1.5, status="error", error="boom"),
        "sticky": row(20000, 2.0, moves=1),
    }
    d = decide("range", rows)
    assert d["recommended"] == "sticky"


def test_ties_go_to_the_run_order():
    rows = {
        "range": row(30000, 3.0),
        "lag-aware:global": row(10000, 1.0, moves=2),
        "lag-aware": row(10000, 1.0, moves=2),
    }
    assert decide("range", rows)["recommended"] == "lag-aware"  # lag-aware comes first in ORDER


# -- the consumer protocol as a candidate ---------------------------------------------------------


def test_consumer_protocol_is_a_candidate_only_where_the_group_lands_and_online():
    rows = {
        "sticky": row(30000, 3.0),
        "server-range": row(10000, 1.0, moves=0),  # sticky lands on uniform, not range
        "server-uniform": row(10000, 1.0, moves=1, kept=11),
        "lag-aware": row(10000, 1.0, moves=3),
    }
    d = decide("sticky", rows)
    assert d["recommended"] == "server-uniform"
    assert d["how"] == "rolling bounce with group.protocol=consumer (the broker assigns with uniform)"
    assert d["steps"] == "docs/fleet.md#moving-to-the-consumer-protocol-kip-848"
    # custom user data in the current assignments blocks the online move: lag-aware instead
    assert decide("sticky", rows, user_data=2)["recommended"] == "lag-aware"
    # range lands on range
    rows_range = {"range": row(30000, 3.0), "server-range": row(10000, 1.0, moves=2), "server-uniform": row(10000, 1.0)}
    assert decide("range", rows_range)["recommended"] == "server-range"


# -- counts --------------------------------------------------------------------------------------


def test_count_switch_when_lag_is_at_the_bound_but_counts_are_not_balanced():
    rows = {
        "range": row(10500, 1.05, spread=3, moves=0),
        "sticky": row(11000, 1.10, spread=1, moves=1),  # busiest lag higher: no
        "roundrobin": row(9000, 0.9, spread=0, moves=7),
        "cooperative-sticky": row(10500, 1.05, spread=1, moves=2),  # same lag, fewest moves
    }
    d = decide("range", rows)
    assert d["action"] == "switch" and d["recommended"] == "cooperative-sticky"
    assert d["reason"].startswith("count:") and d["spread_current"] == 3 and d["spread_recommended"] == 1
    assert d["how"] == "two rolling bounces: [cooperative-sticky, range], then [cooperative-sticky]"
    assert d["steps"] == "docs/upgrade.md#eager-cooperative-two-bounces-kip-429"


def test_count_switch_in_a_group_without_lag():
    d = decide("range", {"range": row(spread=4), "fair": row(spread=1, moves=3), "roundrobin": row(spread=0, moves=5)})
    assert d["recommended"] == "fair" and d["lag_gain_pct"] is None


def test_unbalanced_counts_without_a_balanced_candidate_keep():
    d = decide("range", {"range": row(10500, 1.05, spread=3), "sticky": row(12000, 1.2, spread=0)})
    assert d["action"] == "keep" and "without raising the busiest member's lag" in d["reason"]


def test_balanced_groups_keep():
    d = decide("range", {"range": row(10500, 1.05, spread=1), "lag-aware": row(10000, 1.0, spread=0, moves=1)})
    assert d["action"] == "keep" and d["reason"] == "busiest member at 1.05x the lag bound, max-min 1"
    d = decide("range", {"range": row(spread=0), "sticky": row(spread=0)})
    assert d["action"] == "keep" and d["reason"].startswith("no lag")


# -- how the switch is done ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "target", "how", "step"),
    [
        (
            "lag-aware",
            "lag-aware:global",
            "one rolling bounce: same protocol 'lag-aware', configured as lag-aware(mode='global')",
            "upgrade.md#same-protocol-name-another-library-one-bounce",
        ),
        (
            "cooperative-sticky",
            "sticky",
            "two rolling bounces: [cooperative-sticky, sticky], then [sticky]",
            "upgrade.md#cooperative-eager-two-bounces-back",
        ),
        (
            "roundrobin",
            "cooperative-sticky",
            "two rolling bounces: [cooperative-sticky, roundrobin], then [cooperative-sticky]",
            "upgrade.md#eager-cooperative-two-bounces-kip-429",
        ),
        (
            "range",
            "lag-aware:sticky",
            "two rolling bounces: [lag-aware(sticky=True), range], then [lag-aware(sticky=True)]",
            "upgrade.md#how-the-broker-picks-the-assignor",
        ),
        (
            "range",
            "sticky",
            "two rolling bounces: [sticky, range], then [sticky]",
            "upgrade.md#how-the-broker-picks-the-assignor",
        ),
    ],
)
def test_switch_method(current, target, how, step):
    online, got_how, steps = R.switch_method(current, target)
    assert online and got_how == how
    assert [R.step_ref(k) for k in steps] == [f"docs/{step}"]


def test_every_linked_step_is_a_heading_of_its_document():
    # MkDocs' anchors (Python-Markdown's toc slugify), worked out by hand
    expected = {
        "one-bounce": "same-protocol-name-another-library-one-bounce",
        "pick": "how-the-broker-picks-the-assignor",
        "to-cooperative": "eager-cooperative-two-bounces-kip-429",
        "to-eager": "cooperative-eager-two-bounces-back",
        "to-consumer": "moving-to-the-consumer-protocol-kip-848",
    }
    assert set(expected) == set(R.STEPS)
    for key, (doc, heading) in R.STEPS.items():
        text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
        assert re.search(rf"^#+ {re.escape(heading)}$", text, re.M), (doc, heading)
        assert R.anchor(heading) == expected[key]


# -- the table and the fleet summary -------------------------------------------------------------


def _results(groups):
    """A results table (pandas) from {group: (current, group_protocol, user_data, {strategy: row})}."""
    out = []
    for g, (current, gp, ud, rows) in groups.items():
        for s, r in rows.items():
            out.append(
                {
                    "cluster": "c1",
                    "group_id": g,
                    "strategy": s,
                    "current_protocol": current,
                    "group_protocol": gp,
                    "custom_user_data": ud,
                    "members": 4,
                    "partitions": 12,
                    **r,
                }
            )
    return pd.DataFrame(out)


def test_recommendations_table_and_summary():
    df = _results(
        {
            "a-lag": ("range", "classic", 0, {"range": row(30000, 3.0), "lag-aware": row(10000, 1.0, moves=4, kept=8)}),
            "b-count": ("range", "classic", 0, {"range": row(spread=3), "sticky": row(spread=1, moves=2)}),
            "c-keep": ("sticky", "classic", 0, {"sticky": row(10000, 1.0), "range": row(9000, 0.9)}),
            "d-consumer": ("uniform", "consumer", 0, {"server-uniform": row(10000, 1.0)}),
            "e-to-consumer": (
                "sticky",
                "classic",
                0,
                {"sticky": row(20000, 2.0), "server-uniform": row(10000, 1.0, moves=5)},
            ),
        }
    )
    rec = R.recommendations(df, ORDER)
    assert list(rec.columns) == list(R.COLUMNS)
    got = {g: (a, None if pd.isna(r) else r) for g, a, r in zip(rec.group_id, rec.action, rec.recommended)}
    assert got == {
        "a-lag": ("switch", "lag-aware"),
        "b-count": ("switch", "sticky"),
        "c-keep": ("keep", "sticky"),
        "d-consumer": ("review", None),
        "e-to-consumer": ("switch", "server-uniform"),
    }
    s = R.summary(rec)
    assert s["groups"] == 5
    assert s["actions"] == {"keep": 1, "switch": 3, "review": 1}
    assert s["switch_to"] == {"lag-aware": 1, "server-uniform": 1, "sticky": 1}
    assert s["switch_from"] == {"range": 2, "sticky": 1}
    assert (s["for_lag"], s["for_count"], s["online"], s["to_consumer_protocol"]) == (2, 1, 3, 1)
    assert s["moves"] == 4 + 2 + 5
    assert (s["busiest_lag_before"], s["busiest_lag_after"]) == (30000 + 20000, 10000 + 10000)
    assert s["review_reasons"] == {"already on the consumer protocol: the broker assigns": 1}
    lines = R.console_lines(rec)
    assert "keep 1, switch 3" in lines[0] and "review 1 of 5 groups" in lines[0]


def test_empty_results_give_an_empty_table():
    rec = R.recommendations(pd.DataFrame(columns=list(R.INPUT_COLUMNS)), ORDER)
    assert rec.empty and list(rec.columns) == list(R.COLUMNS)
