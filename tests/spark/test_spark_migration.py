"""The fleet report's "moving to the consumer protocol" view (issue 16), without Spark: groups go
through the fleet job's per-group function, then kassign.fleet.migration."""

import os

import pyarrow as pa
import pytest

import kassign
from kassign.fleet import migration as M
from kassign.fleet.group import rows_to_table
from oracles.fleet_group import evaluate_group
from support.fleet_tables import members_table, parts_table

STRATEGIES = ("range", "sticky", "cooperative-sticky", "lag-aware", "server-uniform", "server-range")


def group_parts(n, protocol, group_protocol="classic", lag=lambda p: 10 * p):
    rows = [
        {"topic": "t", "partition": p, "committed": 0, "end_offset": lag(p), "beginning_offset": 0} for p in range(n)
    ]
    rows.append({"topic": None, "state": "Stable", "protocol": protocol, "group_protocol": group_protocol})
    return parts_table(rows)


def group(gid, protocol, owned, *, group_protocol="classic", user_data=None, n=6):
    members = members_table(
        [
            {
                "member_id": m,
                "topics": ["t"],
                "owned_partitions": [{"topic": "t", "partition": p} for p in ps],
                "generation": 3,
                "assignment_user_data": user_data if i == 0 else None,
            }
            for i, (m, ps) in enumerate(owned.items())
        ]
    )
    rows = evaluate_group("c", gid, members, group_parts(n, protocol, group_protocol), STRATEGIES)
    return rows_to_table(rows, False)


@pytest.fixture(scope="module")
def view():
    tables = [
        # range, balanced as range deals it: server-range gives the same plan, nothing moves
        group("g-range", "range", {"a": [0, 1, 2], "b": [3, 4, 5]}),
        # cooperative-sticky, skewed: uniform keeps what balance allows
        group("g-coop", "cooperative-sticky", {"a": [0, 1, 2, 3, 4], "b": [5], "c": []}),
        # lag-aware: moves to uniform, lag-awareness lost
        group("g-lag", "lag-aware", {"a": [0, 5], "b": [1, 4], "c": [2, 3]}),
        # a custom assignor writing assignment user data: blocked
        group("g-custom", "stream", {"a": [0, 1, 2], "b": [3, 4, 5]}, user_data=b"\x00\x01"),
        # already on the consumer protocol
        group("g-kip848", "", {"a": [0, 1, 2], "b": [3, 4, 5]}, group_protocol="consumer"),
    ]
    return M.migration_view(pa.concat_tables(tables).to_pandas())


def row(view, gid):
    return view[view.group_id == gid].iloc[0]


def test_every_group_has_one_row(view):
    assert sorted(view.group_id) == ["g-coop", "g-custom", "g-kip848", "g-lag", "g-range"]
    assert list(view.columns) == list(M.VIEW_COLUMNS)


def test_target_assignor_and_online(view):
    assert row(view, "g-range").lands_on == "range" and row(view, "g-range").online
    assert row(view, "g-coop").lands_on == "uniform" and row(view, "g-coop").status == "online"
    assert row(view, "g-lag").lands_on == "uniform"
    r = row(view, "g-custom")
    assert r.status == "blocked" and not r.online
    assert "custom user data in 1 member" in r.reason
    assert row(view, "g-kip848").status == "already consumer"


def test_moves_at_the_switch_are_the_server_strategies_moves(view):
    # range: server-range recomputes the same contiguous ranges, nothing moves
    assert row(view, "g-range").moves == 0
    # coop skewed (5, 1, 0 of 6 over 3 members): uniform keeps 2 + 1 + 0 = 3, moves 3
    expected = kassign.assign(
        "server-uniform",
        {
            "a": kassign.Member(["t"], [("t", p) for p in range(5)]),
            "b": kassign.Member(["t"], [("t", 5)]),
            "c": kassign.Member(["t"]),
        },
        {"t": 6},
    )
    kept = len(set(expected["a"]) & {("t", p) for p in range(5)}) + len(set(expected["b"]) & {("t", 5)})
    r = row(view, "g-coop")
    assert r.moves == 6 - kept == 3 and r.owned == 6 and r.moved_pct == pytest.approx(0.5)
    assert r.spread_after <= 1


def test_semantics_lost(view):
    assert row(view, "g-lag").semantics_lost == "lag-awareness"
    assert row(view, "g-coop").semantics_lost == ""
    assert row(view, "g-custom").semantics_lost == "custom assignor 'stream'"
    assert M.semantics_lost("failover") == "failover priority" and M.semantics_lost("fair") == "fair's ordering"


def test_totals_and_plot(view, tmp_path):
    t = M.totals(view)
    assert t["groups"] == 5 and t["online"] == 3 and t["blocked"] == 1 and t["already_consumer"] == 1
    assert t["lands_on_range"] == 1 and t["lands_on_uniform"] == 2
    assert t["moves"] == int(view[view.status == "online"].moves.sum())
    assert t["semantics_lost"] == {"lag-awareness": 1, "custom assignor 'stream'": 1}
    f = M.plot(view, str(tmp_path))
    assert f is not None and os.path.getsize(tmp_path / f[0]) > 1000
    assert "3 of 5 groups can move online" in M.console_lines(view)[0]
