"""The fleet job's per-group evaluation in the Rust core (kassign.fleet.evaluate) equals the Python
reference (oracles.fleet_group.evaluate_group: kassign.assign + the Python metrics + the churn
replay in Python) row by row, on random groups, bad rows included."""

from __future__ import annotations

import math
import random

import pyarrow as pa
import pytest

import kassign
from kassign.assignors import PYTHON_OWNERS, PYTHON_STRATEGIES
from kassign.fleet.evaluate import evaluate_group_table
from kassign.fleet.group import result_schema, strategy_labels
from oracles.fleet_group import evaluate_group
from support.fleet_tables import members_table, parts_table

TIMES = ("time_ms", "churn_time_ms")
#: Every fleet label: kassign.STRATEGIES and lag-aware's modes (sticky among them).
LABELS = list(strategy_labels())
IDS = ["a", "b", "c", "d", "m-1", "m-2", "it's", 'say "hi"', "back\\slash", "é-ü", "z" * 3, "0"]
TOPICS = ["t", "u", "v", "w-long-name"]
RACKS = [None, "", "r0", "r1", "r2"]


def _maybe(rng: random.Random, p: float, value):
    return value if rng.random() >= p else None


def random_group(rng: random.Random, bad: bool) -> tuple[pa.Table, pa.Table]:
    """Members and partition-side tables of one group. ``bad`` groups get a few broken rows."""
    n = rng.choice([0, 1, 1, 2, 3, 4, 5, 8, 12]) if bad else rng.randint(1, 12)
    ids = rng.sample(IDS, min(n, len(IDS)))
    counts = {t: rng.choice([1, 2, 3, 5, 8, 13]) for t in TOPICS}
    members = []
    for mid in ids:
        subs = rng.sample(TOPICS, rng.randint(1, 3))
        if rng.random() < 0.1:
            subs.append("nonexistent")
        owned = []
        for _ in range(rng.randint(0, 4)):
            t = rng.choice(TOPICS + ["gone"])
            owned.append({"topic": t, "partition": rng.randint(-1, counts.get(t, 3) + 1)})
        members.append(
            {
                "member_id": mid,
                "group_instance_id": _maybe(rng, 0.7, f"inst-{mid}"),
                "client_id": "client",
                "host": "/10.0.0.1",
                "rack": rng.choice(RACKS),
                "topics": subs,
                "owned_partitions": owned if rng.random() < 0.8 else None,
                "generation": rng.choice([None, -1, 1, 2, 2, 3]),
                "user_data": rng.choice([None, b"\x00\x00\x00\x05", b"\x00\x00\x00\x09", b"\xff\xff\xff\xff", b"\x01"]),
            }
        )
    if bad and members:
        i = rng.randrange(len(members))
        kind = rng.randrange(9)
        row = members[i]
        if kind == 0:
            row["member_id"] = rng.choice([None, ""])
        elif kind == 1:
            members.append(dict(row))  # duplicate id
        elif kind == 2:
            row["topics"] = None
        elif kind == 3:
            row["topics"] = [*row["topics"], None]
        elif kind == 4:
            row["owned_partitions"] = [*(row["owned_partitions"] or []), None]
        elif kind == 5:
            row["owned_partitions"] = [{"topic": None, "partition": 0}]
        elif kind == 6:
            row["owned_partitions"] = [{"topic": "t", "partition": None}]
        # 7, 8: the partition side is broken below
    parts = []
    for t in TOPICS:
        for p in range(counts[t]):
            if rng.random() < 0.1:
                continue  # a gap: the partition exists (max index + 1) without a row
            end = rng.choice([None, 0, 10, 1_000, rng.randint(0, 10**9)])
            parts.append(
                {
                    "topic": t,
                    "partition": p,
                    "replica_racks": rng.choice(
                        [None, [], ["r0"], ["r1", "r2"], ["r0", "r1", "r2"], ["", "r1"], ["r2", "r2"]]
                    ),
                    "beginning_offset": rng.choice([None, 0, 5, 500]),
                    "end_offset": end,
                    "committed": rng.choice([None, -1, 0, 3, 400, (end or 0) // 2, (end or 0) + 7]),
                }
            )
    for _ in range(rng.randint(0, 3)):  # duplicates, negatives, null keys, unsubscribed topics
        extra = dict(rng.choice(parts)) if parts else {"topic": "t", "partition": 0}
        extra.update(
            rng.choice([{}, {"partition": -3}, {"partition": None}, {"topic": "unsubscribed"}, {"committed": 1}])
        )
        parts.append(extra)
    if bad and rng.random() < 0.5:
        kind = rng.randrange(2)
        if kind == 0 and parts:
            parts[rng.randrange(len(parts))]["replica_racks"] = ["r1", None]
        else:
            parts.append({"topic": "t", "partition": 2**31 - 1, "end_offset": 5, "committed": 1})
    rng.shuffle(parts)
    for _ in range(rng.choice([0, 1, 1, 2])):
        parts.append(
            {
                "topic": None,
                "state": rng.choice([None, "", "Stable", "Empty"]),
                "protocol": rng.choice([None, "", "range", "cooperative-sticky"]),
            }
        )
    m_tbl = members_table(members)
    p_tbl = parts_table(parts)
    return m_tbl, p_tbl


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def assert_rows_equal(got: pa.Table, want: list[dict], context: str) -> None:
    assert got.schema.equals(result_schema("assignment" in got.column_names)), context
    rows = got.to_pylist()
    assert [r["strategy"] for r in rows] == [r["strategy"] for r in want], context
    for g, w in zip(rows, want):
        for k in w:
            if k in TIMES:
                assert (g[k] is None) == (w[k] is None), (context, g["strategy"], k)
                continue
            assert _same(g[k], w[k]), (context, g["strategy"], k, g[k], w[k], g.get("error"), w.get("error"))


CASES = [(seed, seed % 3 == 0) for seed in range(120)]


@pytest.mark.parametrize("seed, bad", CASES[:60])
def test_core_evaluation_equals_the_python_reference(seed, bad):
    rng = random.Random(seed)
    m, p = random_group(rng, bad)
    churn = rng.choice([0, 1, 3, 4])
    reset = rng.choice(["latest", "earliest"])
    kw = dict(churn_rounds=churn, with_assignment=rng.random() < 0.7, auto_offset_reset=reset, seed=seed)
    want = evaluate_group("k", f"g{seed}", m, p, LABELS, **kw)
    got = evaluate_group_table("k", f"g{seed}", m, p, LABELS, **kw)
    assert_rows_equal(got, want, f"seed {seed}")


@pytest.mark.parametrize("seed, bad", CASES[60:])
def test_core_evaluation_equals_the_reference_on_strategy_subsets(seed, bad):
    rng = random.Random(seed)
    m, p = random_group(rng, bad)
    strategies = rng.sample(LABELS, rng.randint(1, len(LABELS)))
    kw = dict(churn_rounds=rng.choice([2, 5]), with_assignment=False, seed=seed)
    want = evaluate_group("k", "grp", m, p, strategies, **kw)
    got = evaluate_group_table("k", "grp", m, p, strategies, **kw)
    assert_rows_equal(got, want, f"seed {seed}")


def test_random_groups_cover_ok_and_every_kind_of_error():
    """The generator above is not vacuous: ok rows, build errors and strategy-input errors occur."""
    reasons = set()
    statuses = set()
    for seed, bad in CASES:
        rng = random.Random(seed)
        m, p = random_group(rng, bad)
        for r in evaluate_group("k", "g", m, p, ["range"]):
            statuses.add(r["status"])
            if r["error"]:
                reasons.add(
                    r["error"].split(":")[0] if r["error"].startswith("range") else r["error"].split(":")[-1].strip()
                )
    assert statuses == {"ok", "error"}
    assert "range" in reasons  # kassign.assign rejected the input (racks, partition count)
    assert len(reasons) >= 5, reasons


def test_bigger_groups_with_churn():
    rng = random.Random(99)
    members = [
        {
            "member_id": f"member-{i:03d}",
            "topics": rng.sample(TOPICS, rng.randint(1, 4)),
            "rack": rng.choice(RACKS),
            "generation": 4,
            "owned_partitions": [{"topic": "t", "partition": i % 40}],
        }
        for i in range(60)
    ]
    parts = [
        {
            "topic": t,
            "partition": p,
            "replica_racks": [f"r{p % 3}"],
            "end_offset": rng.randint(0, 10**6),
            "committed": rng.randint(0, 10**5),
        }
        for t in TOPICS
        for p in range(40)
    ]
    m = members_table(members)
    p = parts_table(parts)
    kw = dict(churn_rounds=6, with_assignment=True, seed=3)
    got = evaluate_group_table("k", "big", m, p, LABELS, **kw)
    assert_rows_equal(got, evaluate_group("k", "big", m, p, LABELS, **kw), "big")
    assert set(got.column("status").to_pylist()) == {"ok"}
    assert min(got.column("churn_moves").to_pylist()) > 0


def test_a_failing_python_strategy_is_an_error_row_of_its_own(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setitem(PYTHON_STRATEGIES, "fair", boom)
    monkeypatch.setitem(PYTHON_OWNERS, "fair", (boom, lambda options: False))
    m, p = random_group(random.Random(5), bad=False)
    strategies = ["range", "fair", "lag-aware"]
    got = evaluate_group_table("k", "g", m, p, strategies, churn_rounds=2)
    assert got.column("status").to_pylist() == ["ok", "error", "ok"]
    assert got.column("error").to_pylist()[1] == "fair: RuntimeError: boom"
    assert_rows_equal(got, evaluate_group("k", "g", m, p, strategies, churn_rounds=2), "boom")


def test_spark_shaped_input_large_types_and_several_batches():
    """Spark may hand over large_string/large_list columns and tables of several batches."""
    m, p = random_group(random.Random(11), bad=False)
    big_m = m.cast(pa.schema([pa.field(f.name, _large(f.type)) for f in m.schema]))
    split_p = pa.Table.from_batches(p.to_batches(max_chunksize=3))
    want = evaluate_group_table("k", "g", m, p, kassign.STRATEGIES, churn_rounds=2)
    got = evaluate_group_table("k", "g", big_m, split_p, kassign.STRATEGIES, churn_rounds=2)
    assert_rows_equal(got, want.to_pylist(), "large types")


def _large(t: pa.DataType) -> pa.DataType:
    if pa.types.is_string(t):
        return pa.large_string()
    if pa.types.is_list(t):
        return pa.large_list(_large(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _large(f.type)) for f in t])
    return t


COMPACT_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        (
            "parts",
            pa.list_(
                pa.struct(
                    [
                        ("partition", pa.int32()),
                        ("replica_racks", pa.list_(pa.string())),
                        ("beginning_offset", pa.int64()),
                        ("end_offset", pa.int64()),
                    ]
                )
            ),
        ),
        ("offsets", pa.list_(pa.struct([("partition", pa.int32()), ("committed", pa.int64())]))),
        ("state", pa.string()),
        ("protocol", pa.string()),
    ]
)


def compact_side(rng: random.Random, parts: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The job's compact partition side (one row per topic with lists) built from a per-row side,
    and the per-row side the Spark join of partitions with offsets gives for it."""
    by_topic: dict[str, dict] = {}
    markers = []
    for r in parts.to_pylist():
        if r["topic"] is None:
            markers.append(r)
            continue
        d = by_topic.setdefault(r["topic"], {"parts": [], "offsets": []})
        d["parts"].append({k: r[k] for k in ("partition", "replica_racks", "beginning_offset", "end_offset")})
        if r["committed"] is not None or rng.random() < 0.3:
            d["offsets"].append({"partition": r["partition"], "committed": r["committed"]})
    rows, expanded = [], []
    for t, d in by_topic.items():
        offsets = d["offsets"] if d["offsets"] or rng.random() < 0.5 else None
        rows.append({"topic": t, "parts": d["parts"], "offsets": offsets})
        for p in d["parts"]:
            matches = [
                o["committed"] for o in offsets or [] if p["partition"] is not None and o["partition"] == p["partition"]
            ]
            for c in matches or [None]:
                expanded.append({"topic": t, **p, "committed": c})
    rows += [{"topic": None, "state": m["state"], "protocol": m["protocol"]} for m in markers]
    expanded += markers
    return pa.Table.from_pylist(rows, schema=COMPACT_SCHEMA), parts_table(expanded)


@pytest.mark.parametrize("seed", range(200, 230))
def test_compact_partition_side_equals_the_reference_on_the_joined_rows(seed):
    rng = random.Random(seed)
    m, p = random_group(rng, bad=seed % 4 == 0)
    compact, expanded = compact_side(rng, p)
    kw = dict(churn_rounds=rng.choice([0, 2, 4]), with_assignment=True, seed=seed)
    want = evaluate_group("k", "g", m, expanded, kassign.STRATEGIES, **kw)
    got = evaluate_group_table("k", "g", m, compact, kassign.STRATEGIES, **kw)
    assert_rows_equal(got, want, f"compact seed {seed}")


@pytest.mark.parametrize("seed", range(200))
def test_migration_inputs_equal_the_reference(seed):
    """The core's migration input columns (group_protocol, custom_user_data) against
    oracles.fleet_group.migration_meta, on marker and topic rows, nulls, empty strings and bytes."""
    from oracles.fleet_group import migration_meta

    rng = random.Random(seed)
    n_parts = rng.randint(0, 6)
    nulls_only = rng.random() < 0.3
    side = {
        "topic": [rng.choice([None, "t0", "t1"]) for _ in range(n_parts)],
        "group_protocol": [
            None if nulls_only else rng.choice([None, "", "consumer", "classic"]) for _ in range(n_parts)
        ],
    }
    if rng.random() < 0.2:
        del side["group_protocol"]
    p = pa.table(side, schema=pa.schema([(k, pa.string()) for k in side]))
    n_members = rng.randint(0, 6)
    data = [None if nulls_only else rng.choice([None, b"", b"x", b"\x00\x01"]) for _ in range(n_members)]
    m = pa.table(
        {"member_id": [f"m{i}" for i in range(n_members)], "assignment_user_data": pa.array(data, pa.binary())}
    )
    if rng.random() < 0.2:
        m = m.drop_columns(["assignment_user_data"])
    want = migration_meta(m, p)
    got = evaluate_group_table("k", "g", m, p, ["range", "lag-aware"])
    assert got.column("group_protocol").to_pylist() == [want["group_protocol"]] * 2
    assert got.column("custom_user_data").to_pylist() == [want["custom_user_data"]] * 2
