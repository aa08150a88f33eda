"""The stream plan's per-group inputs built in the core (``kassign._core.StreamIndex``,
``kassign.fleet.evaluate.evaluate_stream_group``) against the Python path they replace
(``oracles.fleet_stream.group_inputs`` + ``evaluate_group_table``), row by row, on random fleets:
several clusters, groups with bad rows (test_fleet_evaluate.random_group), partitions with odd
rows (null partitions, duplicates, racks as dictionaries or strings), committed offsets with
nulls, duplicates and unknown topics, groups-table rows with empty and null values, stream rows
in and out of ``kind`` order, batches cut anywhere."""

from __future__ import annotations

import itertools
import random

import pyarrow as pa
import pytest

from kassign.fleet.evaluate import evaluate_group_table, evaluate_stream_group
from kassign.fleet.snapshot import OFFSETS_SCHEMA, PARTITIONS_SCHEMA
from kassign.fleet.stream import (
    GROUP_COLUMNS,
    KIND_GROUP,
    KIND_MEMBER,
    KIND_OFFSET,
    MEMBER_COLUMNS,
    group_tables,
    pack_offsets,
    partition_index,
    stream_index,
    write_arrow,
    write_compact_partitions,
)
from oracles.fleet_stream import group_inputs
from oracles.test_fleet_evaluate import LABELS, TOPICS, assert_rows_equal, random_group

CLUSTERS = ["c1", "c2", "c3"]  # c3 has no partitions


def _partitions(rng: random.Random, dictionary: bool) -> pa.Table:
    rows = []
    odd = 0.03 if rng.random() < 0.3 else 0.0  # odd rows fail every group of their topic: few fleets
    for cluster in CLUSTERS[:2]:
        for t in [*TOPICS, "unsubscribed"]:
            if rng.random() < 0.15:
                continue  # a topic without metadata in this cluster
            for p in range(rng.choice([1, 2, 3, 5, 8])):
                rows.append(
                    {
                        "cluster": cluster,
                        "topic": t,
                        "partition": p if rng.random() >= odd else rng.choice([None, -2, p]),
                        "replica_racks": rng.choice([None, [], ["r0"], ["r1", "r2"], ["r0", "r1", "r2"], ["", "r1"]])
                        if rng.random() >= odd
                        else ["r2", None],
                        "beginning_offset": rng.choice([None, 0, 5, 500]),
                        "end_offset": rng.choice([None, 0, 10, 1_000, rng.randint(0, 10**9)]),
                    }
                )
    rng.shuffle(rows)
    t = pa.Table.from_pylist(rows, schema=pa.schema([f.with_nullable(True) for f in PARTITIONS_SCHEMA]))
    if dictionary:
        racks = pa.array(t.column("replica_racks").to_pylist(), pa.list_(pa.dictionary(pa.int32(), pa.string())))
        t = t.set_column(t.schema.get_field_index("replica_racks"), "replica_racks", racks)
    return t


def _offsets(rng: random.Random, keys: list[tuple[str, str]]) -> pa.Table:
    rows = []
    for cluster, group_id in keys:
        if rng.random() < 0.2:
            continue
        for _ in range(rng.randint(0, 25)):
            rows.append(
                {
                    "cluster": cluster,
                    "group_id": group_id,
                    "topic": rng.choice([*TOPICS, "gone", None]),
                    "partition": rng.choice([0, 1, 2, 3, 4, 9, None]),
                    "offset": rng.choice([None, -1, 0, 3, 400, rng.randint(0, 10**9)]),
                }
            )
    rng.shuffle(rows)
    return pa.Table.from_pylist(rows, schema=pa.schema([f.with_nullable(True) for f in OFFSETS_SCHEMA]))


def _stream(rng: random.Random, keys: list[tuple[str, str]], offset_keys: pa.Table) -> pa.Table:
    member_schema = pa.schema(
        [("cluster", pa.string()), ("group_id", pa.string()), *(pa.field(f.name, f.type) for f in _member_fields())]
    )
    pieces = []
    for cluster, group_id in keys:
        members, _ = random_group(rng, rng.random() < 0.2)
        rows = members.to_pylist()
        for r in rows:
            r["assignment_user_data"] = rng.choice([None, None, b"", b"custom"])
        members = pa.Table.from_pylist(
            [{"cluster": cluster, "group_id": group_id, **{k: r.get(k) for k in MEMBER_COLUMNS}} for r in rows],
            schema=member_schema,
        )
        pieces.append(_kind(members, KIND_MEMBER))
        groups = [
            {
                "cluster": cluster,
                "group_id": group_id,
                "state": rng.choice([None, "", "Stable", "Empty"]),
                "protocol": rng.choice([None, "", "range", "cooperative-sticky"]),
                "group_protocol": rng.choice([None, "", "classic", "consumer"]),
            }
            for _ in range(rng.choice([0, 1, 1, 2]))
        ]
        if groups:
            schema = pa.schema([(c, pa.string()) for c in ("cluster", "group_id", *GROUP_COLUMNS)])
            pieces.append(_kind(pa.Table.from_pylist(groups, schema=schema), KIND_GROUP))
    pieces.append(_kind(offset_keys, KIND_OFFSET))
    if rng.random() < 0.3:  # an offsets row that points nowhere
        odd = pa.table(
            {
                "cluster": [keys[0][0]],
                "group_id": [keys[0][1]],
                "offsets_start": pa.array([None], pa.int64()),
                "offsets_end": pa.array([3], pa.int64()),
            }
        )
        pieces.append(_kind(odd, KIND_OFFSET))
    t = pa.concat_tables(pieces, promote_options="default")
    for c in GROUP_COLUMNS:
        if c not in t.column_names:
            t = t.append_column(c, pa.nulls(t.num_rows, pa.string()))
    # Spark sorts by group then kind; half of the fleets keep kinds shuffled within a group
    order = [("cluster", "ascending"), ("group_id", "ascending")]
    if rng.random() < 0.5:
        t = t.sort_by([*order, ("kind", "ascending")])
    else:
        t = t.append_column("r", pa.array([rng.random() for _ in range(t.num_rows)])).sort_by(
            [*order, ("r", "ascending")]
        )
        t = t.drop_columns(["r"])
    return t


def _member_fields() -> list[pa.Field]:
    from kassign.fleet.snapshot import MEMBERS_SCHEMA

    return [f for f in MEMBERS_SCHEMA if f.name in MEMBER_COLUMNS]


def _kind(t: pa.Table, k: int) -> pa.Table:
    return t.append_column("kind", pa.array([k] * t.num_rows, pa.int8()))


@pytest.mark.parametrize("seed", range(40))
def test_core_stream_inputs_equal_the_python_path(seed, tmp_path):
    rng = random.Random(seed)
    keys = sorted({(rng.choice(CLUSTERS), f"g{rng.randint(0, 30)}") for _ in range(rng.randint(1, 12))})
    parts_path, offs_path = str(tmp_path / "parts.arrow"), str(tmp_path / "offsets.arrow")
    write_compact_partitions(_partitions(rng, dictionary=seed % 2 == 0), parts_path)
    rows, offset_keys = pack_offsets(_offsets(rng, keys))
    write_arrow(rows, offs_path)
    stream = _stream(rng, keys, offset_keys)
    cuts = sorted(rng.choices(range(stream.num_rows + 1), k=rng.randint(0, 4)))
    bounds = [0, *cuts, stream.num_rows]
    batches = [stream.slice(a, b - a).combine_chunks().to_batches()[0] for a, b in itertools.pairwise(bounds) if b > a]
    with_files = rng.random() < 0.85
    reference = partition_index(parts_path, offs_path if with_files else None)
    core = stream_index(parts_path, offs_path if with_files else None)
    kw = dict(
        churn_rounds=rng.choice([0, 1, 3]),
        with_assignment=rng.random() < 0.5,
        auto_offset_reset=rng.choice(["latest", "earliest"]),
        seed=seed,
    )
    n = 0
    for group in group_tables(batches):
        cluster, group_id, members, side = group_inputs(group, reference)
        want = evaluate_group_table(cluster, group_id, members, side, LABELS, **kw)
        got = evaluate_stream_group(group, core, LABELS, **kw)
        assert_rows_equal(got, want.to_pylist(), f"seed {seed} {cluster}/{group_id}")
        assert got.schema == want.schema
        n += 1
    assert n >= 1


def test_index_reads_the_files(tmp_path):
    rng = random.Random(7)
    parts_path = str(tmp_path / "parts.arrow")
    written = write_compact_partitions(_partitions(rng, dictionary=True), parts_path)
    assert len(stream_index(parts_path)) == written > 0


def test_offsets_rows_outside_the_file_are_an_error(tmp_path):
    rng = random.Random(3)
    parts_path, offs_path = str(tmp_path / "parts.arrow"), str(tmp_path / "offsets.arrow")
    write_compact_partitions(_partitions(rng, dictionary=False), parts_path)
    rows, _ = pack_offsets(_offsets(rng, [("c1", "g1")]))
    write_arrow(rows, offs_path)
    members, _ = random_group(random.Random(1), False)
    group = pa.concat_tables(
        [
            _kind(
                members.add_column(0, "cluster", pa.array(["c1"] * members.num_rows)).add_column(
                    1, "group_id", pa.array(["g1"] * members.num_rows)
                ),
                KIND_MEMBER,
            ),
            _kind(
                pa.table(
                    {
                        "cluster": ["c1"],
                        "group_id": ["g1"],
                        "offsets_start": pa.array([0], pa.int64()),
                        "offsets_end": pa.array([rows.num_rows + 5], pa.int64()),
                    }
                ),
                KIND_OFFSET,
            ),
        ],
        promote_options="default",
    )
    with pytest.raises(ValueError, match="outside the offsets file"):
        evaluate_stream_group(group, stream_index(parts_path, offs_path), ["range"])
