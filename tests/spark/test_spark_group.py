"""The fleet job's per-group function and churn replay, without Spark."""

import pyarrow as pa
import pytest

import kassign
from kassign import Member, TopicPartition, _core
from kassign.fleet.group import assignment_from_rows, result_schema, rows_to_table
from oracles import quality
from oracles.fleet_churn import replay
from oracles.fleet_group import GroupInputError, build_group, core_partition_lag, evaluate_group
from support.fleet_tables import members_table, parts_table


def group_parts(rows, state="Stable", protocol="range"):
    """The partition side of a group: ``rows`` and the marker row of its groups-table entry."""
    return parts_table([*rows, {"topic": None, "state": state, "protocol": protocol}])


def part(t, p, committed, end, begin=0, racks=None):
    return {
        "topic": t,
        "partition": p,
        "committed": committed,
        "end_offset": end,
        "beginning_offset": begin,
        "replica_racks": racks,
    }


@pytest.mark.parametrize(
    "committed, begin, end, reset, lag",
    [
        (5555, 1111, 9999, "latest", 4444),  # the proposal's vectors (docs/strategies/lag-aware.md)
        (5555, 0, 0, "latest", 0),
        (None, 1111, 9999, "latest", 0),
        (None, 1111, 9999, "earliest", 8888),
        (-1, 1111, 9999, "earliest", 8888),  # -1 = no committed offset
        (500, 1111, 9999, "latest", 8888),  # below the log start: counts from the log start
        (7, None, None, "latest", 0),  # missing begin/end count as 0
    ],
)
def test_lag_rules(committed, begin, end, reset, lag):
    assert core_partition_lag(committed, begin, end, reset) == lag


def test_build_group_inputs_and_lag_sums():
    m = members_table(
        [
            {
                "member_id": "a",
                "topics": ["t"],
                "rack": "r1",
                "generation": 3,
                "owned_partitions": [{"topic": "t", "partition": 0}],
            },
            {
                "member_id": "b",
                "topics": ["t", "missing"],
                "rack": "",
                "group_instance_id": "i-b",
                "user_data": b"\x00\x00\x00\x05",
            },
        ]
    )
    p = group_parts(
        [part("t", 0, 90, 100, racks=["r1"]), part("t", 2, None, 50), part("t", 1, 10, 10), part("other", 0, 0, 999)]
    )
    g = build_group(m, p)
    assert g.members["a"] == Member(["t"], owned_partitions=[("t", 0)], generation=3, rack="r1")
    assert g.members["b"] == Member(["t", "missing"], rack=None, group_instance_id="i-b", user_data=b"\x00\x00\x00\x05")
    assert g.partitions_per_topic == {"t": 3}  # "other" is not subscribed; max index + 1
    assert g.lags == {("t", 0): 10, ("t", 1): 0, ("t", 2): 0}
    assert g.partition_racks == {("t", 0): ["r1"]}
    assert (g.topics, g.missing_topics) == (2, 1)
    assert (g.sum_lag, g.max_lag, g.uncommitted) == (10, 10, 1)


@pytest.mark.parametrize(
    "rows, message",
    [
        ([], "no members"),
        ([{"member_id": None, "topics": ["t"]}], "member_id is null"),
        ([{"member_id": "a", "topics": ["t"]}, {"member_id": "a", "topics": ["t"]}], "duplicate member_id"),
        ([{"member_id": "a", "topics": None}], "topics"),
        (
            [{"member_id": "a", "topics": ["t"], "owned_partitions": [{"topic": None, "partition": 0}]}],
            "Member.owned_partitions",
        ),
    ],
)
def test_bad_groups_raise_and_become_error_rows(rows, message):
    m = members_table(rows)
    p = group_parts([part("t", 0, 1, 2)])
    with pytest.raises(GroupInputError, match=message):
        build_group(m, p)
    out = evaluate_group("c", "g", m, p, ["range", "roundrobin"])
    assert [r["strategy"] for r in out] == ["range", "roundrobin"]
    assert all(r["status"] == "error" and message.split()[0] in r["error"] for r in out)
    assert all(r["state"] == "Stable" and r["current_protocol"] == "range" for r in out)
    rows_to_table(out, False)  # error rows fit the schema


def test_evaluate_group_equals_kassign_assign_and_quality():
    m = members_table(
        [
            {
                "member_id": f"m{i}",
                "topics": ["t", "u"] if i % 2 else ["t"],
                "rack": f"r{i % 3}",
                "generation": 2,
                "owned_partitions": [{"topic": "t", "partition": i}],
            }
            for i in range(5)
        ]
    )
    p = group_parts(
        [part("t", i, i * 100, 1000 + i, racks=[f"r{i % 3}", f"r{(i + 1) % 3}"]) for i in range(12)]
        + [part("u", i, 0, 10 ** (i % 4)) for i in range(7)]
    )
    rows = evaluate_group("c", "g", m, p, kassign.STRATEGIES, with_assignment=True, churn_rounds=3)
    g = build_group(m, p)
    assert [r["strategy"] for r in rows] == list(kassign.STRATEGIES)
    for r in rows:
        assert r["status"] == "ok", r["error"]
        expected = kassign.assign(
            r["strategy"], g.members, g.partitions_per_topic, lags=g.lags, partition_racks=g.partition_racks
        )
        got = assignment_from_rows(r)
        assert got == {k: v for k, v in expected.items() if v}
        q = quality.evaluate(
            g.members, g.partitions_per_topic, expected, lags=g.lags, partition_racks=g.partition_racks
        )
        for k, v in q.as_dict().items():
            assert r[k] == v, k
        assert r["churn_rounds"] == 3 and r["churn_rebalances"] >= 3 and r["churn_moves"] >= 0
    t = rows_to_table(rows, True)
    assert t.schema.equals(result_schema(True))


def test_a_failing_strategy_is_an_error_row_of_its_own(monkeypatch):
    import oracles.fleet_group as group

    real = kassign.assign

    def flaky(strategy, *a, **k):
        if strategy == "roundrobin":
            raise RuntimeError("boom")
        return real(strategy, *a, **k)

    monkeypatch.setattr(group.kassign, "assign", flaky)
    m = members_table([{"member_id": "a", "topics": ["t"]}])
    rows = evaluate_group("c", "g", m, group_parts([part("t", 0, 0, 0)]), ["range", "roundrobin"])
    assert [r["status"] for r in rows] == ["ok", "error"]
    assert "RuntimeError: boom" in rows[1]["error"]


def test_churn_replay_counts_moves():
    members = {"a": Member(["t"]), "b": Member(["t"])}
    partitions_per_topic = {"t": 4}
    start = kassign.assign("range", members, partitions_per_topic)  # a [0, 1], b [2, 3]
    # one event: a member leaves, its two partitions land on the other member
    r = replay("range", members, partitions_per_topic, start, events=_core.churn_events(list(members), 1, 1))
    assert (r.rounds, r.rebalances, r.moves) == (1, 1, 2)
    # leave then join (rolling restart): range hands back 2 partitions -> 4 moves in all
    r2 = replay("range", members, partitions_per_topic, start, events=_core.churn_events(list(members), 2, 1))
    assert (r2.rounds, r2.rebalances, r2.moves) == (2, 2, 4)
    # a single member cannot leave: the first event is a join
    events = _core.churn_events(["a"], 1, 0)
    assert events == [("join", "kassign-churn-0", "a")]
    r3 = replay(
        "range",
        {"a": Member(["t"])},
        partitions_per_topic,
        {"a": [TopicPartition("t", i) for i in range(4)]},
        events=events,
    )
    assert r3.moves == 2


def test_default_partitions_scale_with_member_rows(tmp_path, monkeypatch):
    from kassign.fleet import config, synth

    snap = tmp_path / "snap"
    stats = synth.synth(5, str(snap), seed=3)
    assert config.default_partitions(str(snap), 2) == 8
    assert config.default_partitions(str(snap), 4) == 16
    monkeypatch.setattr(config, "MEMBER_ROWS_PER_PARTITION", 10)
    assert config.default_partitions(str(snap), 2) == max(8, -(-stats.members // 10))
    monkeypatch.setattr(config, "MAX_DEFAULT_PARTITIONS", 9)
    assert config.default_partitions(str(snap), 2) == 9
    assert config.default_partitions("hdfs://nn/fleet", 2) == 8  # remote: not read here


def test_lag_aware_modes_and_distance_from_the_bound():
    from kassign.fleet.group import VARIANTS, strategy_call, strategy_labels

    assert set(VARIANTS) <= set(strategy_labels()) and set(kassign.STRATEGIES) <= set(strategy_labels())
    assert strategy_call("lag-aware:global") == ("lag-aware", {"mode": "global"})
    assert strategy_call("range") == ("range", {})
    members = pa.Table.from_pylist(
        [
            {"member_id": "a", "topics": ["t"], "owned_partitions": [{"topic": "t", "partition": 0}], "generation": 3},
            {
                "member_id": "b",
                "topics": ["t"],
                "owned_partitions": [{"topic": "t", "partition": 1}, {"topic": "t", "partition": 2}],
                "generation": 3,
            },
        ]
    )
    # The proposal's worked example: lags 100000, 60000, 50000 (committed 0, so lag = end offset).
    parts = pa.Table.from_pylist(
        [
            {"topic": "t", "partition": p, "beginning_offset": 0, "end_offset": e, "committed": 0}
            for p, e in enumerate([100000, 60000, 50000])
        ]
    )
    labels = ["range", "lag-aware", "lag-aware:per-topic", "lag-aware:global", "lag-aware:sticky"]
    rows = {r["strategy"]: r for r in evaluate_group("c", "g", members, parts, labels, churn_rounds=2)}
    assert all(r["status"] == "ok" for r in rows.values()), rows
    bound = max(100000, 210000 / 2)
    for label in ("lag-aware", "lag-aware:per-topic", "lag-aware:global"):
        assert rows[label]["max_member_lag"] == 110000
        assert rows[label]["lag_vs_bound"] == pytest.approx(110000 / bound)
    # range: a [0, 1] = 160000; sticky keeps a's t-0 and b's t-1, t-2 (already the best split).
    assert rows["range"]["lag_vs_bound"] == pytest.approx(160000 / bound)
    assert rows["lag-aware:sticky"]["moves"] == 0 and rows["lag-aware:sticky"]["max_member_lag"] == 110000
