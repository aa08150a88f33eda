"""The pyarrow pieces of the fleet job's stream plan (kassign.fleet.stream): cutting batches into
groups, packing the partitions per topic and the offsets per group, against plain-Python
references on random tables (tests/spark/test_spark_stream.py compares the whole plan with the cogroup
plan on Spark)."""

import itertools
import random
from collections import defaultdict

import pyarrow as pa
import pytest

from kassign.fleet.snapshot import OFFSETS_SCHEMA, PARTITIONS_SCHEMA
from kassign.fleet.stream import compact_partitions, group_tables, pack_offsets


def _random_batches(rng, n_rows):
    """A table sorted by (cluster, group_id), nulls last, and its rows cut into batches at random
    places (empty batches included)."""
    keys = [(rng.choice(["a", "b", None]), rng.choice(["g1", "g2", "g3", "g10", "", None])) for _ in range(n_rows)]
    keys.sort(key=lambda k: (k[0] is None, k[0] or "", k[1] is None, k[1] or ""))
    batch = pa.RecordBatch.from_pydict(
        {"cluster": [k[0] for k in keys], "group_id": [k[1] for k in keys], "row": list(range(n_rows))},
        schema=pa.schema([("cluster", pa.string()), ("group_id", pa.string()), ("row", pa.int64())]),
    )
    cuts = sorted(rng.choices(range(n_rows + 1), k=rng.randint(0, 6)))
    bounds = [0, *cuts, n_rows]
    return batch, [batch.slice(a, b - a) for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("seed", range(300))
def test_group_tables_cuts_runs_of_equal_keys_across_batches(seed):
    rng = random.Random(seed)
    t, batches = _random_batches(rng, rng.randint(0, 40))
    got = [g.to_pylist() for g in group_tables(batches)]
    expected = []
    for row in t.to_pylist():
        if expected and (expected[-1][-1]["cluster"], expected[-1][-1]["group_id"]) == (
            row["cluster"],
            row["group_id"],
        ):
            expected[-1].append(row)
        else:
            expected.append([row])
    assert got == expected


def _random_partitions(rng, dictionary):
    rows = []
    for _ in range(rng.randint(0, 60)):
        rows.append(
            {
                "cluster": rng.choice(["c1", "c2", None]) if rng.random() < 0.1 else rng.choice(["c1", "c2"]),
                "topic": rng.choice(["t1", "t2", "t3", None]) if rng.random() < 0.1 else rng.choice(["t1", "t2", "t3"]),
                "partition": rng.choice([0, 1, 2, 3, None]),
                "replica_racks": rng.choice([None, [], ["r1"], ["r2", "r1"], ["r1", None], ["r3", "r3"]]),
                "beginning_offset": rng.choice([None, 0, 5]),
                "end_offset": rng.choice([None, 10, 99]),
            }
        )
    if rng.random() < 0.5:
        rows.sort(key=lambda r: (r["cluster"] or "", r["topic"] or ""))
    t = pa.Table.from_pylist(rows, schema=pa.schema([f.with_nullable(True) for f in PARTITIONS_SCHEMA]))
    if dictionary:
        t = t.set_column(0, "cluster", t.column("cluster").dictionary_encode())
        t = t.set_column(1, "topic", t.column("topic").dictionary_encode())
        racks = pa.array(t.column("replica_racks").to_pylist(), pa.list_(pa.dictionary(pa.int32(), pa.string())))
        t = t.set_column(3, "replica_racks", racks)
    # several chunks, as Parquet row groups give
    k = rng.randint(1, 3)
    size = -(-t.num_rows // k) if t.num_rows else 1
    return rows, pa.Table.from_batches(t.to_batches(max_chunksize=size), t.schema) if t.num_rows else t


@pytest.mark.parametrize("seed", range(200))
def test_compact_partitions_groups_every_row_of_a_topic(seed):
    rng = random.Random(seed)
    rows, table = _random_partitions(rng, dictionary=seed % 2 == 1)
    expected = defaultdict(list)
    for r in rows:
        if r["cluster"] is not None and r["topic"] is not None:
            expected[(r["cluster"], r["topic"])].append(
                {k: r[k] for k in ("partition", "replica_racks", "beginning_offset", "end_offset")}
            )
    got = {(r["cluster"], r["topic"]): r["parts"] for r in compact_partitions(table).to_pylist()}
    assert got == dict(expected)


@pytest.mark.parametrize("seed", range(200))
def test_pack_offsets_groups_every_row_of_a_group(seed):
    rng = random.Random(seed)
    rows = [
        {
            "cluster": rng.choice(["c1", "c2", None]) if rng.random() < 0.1 else rng.choice(["c1", "c2"]),
            "group_id": rng.choice(["g1", "g2", "g3", None]) if rng.random() < 0.1 else rng.choice(["g1", "g2"]),
            "topic": rng.choice(["t1", "t2", None]),
            "partition": rng.choice([0, 1, None]),
            "offset": rng.choice([None, -1, 7]),
        }
        for _ in range(rng.randint(0, 50))
    ]
    t = pa.Table.from_pylist(rows, schema=pa.schema([f.with_nullable(True) for f in OFFSETS_SCHEMA]))
    packed, keys = pack_offsets(t)
    expected = defaultdict(list)
    for r in rows:
        if r["cluster"] is not None and r["group_id"] is not None:
            expected[(r["cluster"], r["group_id"])].append({k: r[k] for k in ("topic", "partition", "offset")})
    got = {}
    for k in keys.to_pylist():
        start, end = k["offsets_start"], k["offsets_end"]
        got[(k["cluster"], k["group_id"])] = packed.slice(start, end - start).to_pylist()
    assert got == dict(expected)
