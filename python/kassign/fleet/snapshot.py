"""The fleet snapshot format (Parquet): schemas, the column check, writing a snapshot.

Snapshots are written by ``kassign snapshot`` (:mod:`kassign.fleet.collect`, from a live cluster)
and ``kassign synth`` (:mod:`kassign.fleet.synth`); this module imports neither.

A snapshot is a directory (documented in docs/fleet.md)::

    members.parquet     one row per group member
    partitions.parquet  one row per topic partition
    offsets.parquet     one row per committed offset of a group
    groups.parquet      optional: one row per group (lists groups without members, e.g. Empty)
    snapshot.json       optional: format version, source, row counts

Each ``.parquet`` may also be a directory of Parquet files (as Spark writes them). Columns are
checked by :func:`check_snapshot` before the fleet job starts; extra columns are ignored.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

import pyarrow as pa

FORMAT_VERSION = 1

OWNED_TYPE = pa.list_(pa.struct([pa.field("topic", pa.string()), pa.field("partition", pa.int32())]))

MEMBERS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("member_id", pa.string()),
        pa.field("group_instance_id", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("host", pa.string()),
        pa.field("rack", pa.string()),
        pa.field("topics", pa.list_(pa.string())),
        pa.field("owned_partitions", OWNED_TYPE),
        pa.field("generation", pa.int32()),
        pa.field("user_data", pa.binary()),
        # User data of the member's current assignment (classic protocol). Built-in assignors leave
        # it null; a custom assignor's user data blocks an online move to the consumer protocol.
        pa.field("assignment_user_data", pa.binary()),
    ]
)
PARTITIONS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replica_racks", pa.list_(pa.string())),
        pa.field("beginning_offset", pa.int64()),
        pa.field("end_offset", pa.int64()),
    ]
)
OFFSETS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64()),
    ]
)
GROUPS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("state", pa.string()),
        pa.field("protocol_type", pa.string()),
        pa.field("protocol", pa.string()),
        # The group protocol: "classic" (JoinGroup/SyncGroup, client-side assignors) or "consumer"
        # (KIP-848, the broker assigns); from ListGroups v5+ (Kafka 4.0+), null when unknown.
        pa.field("group_protocol", pa.string()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "members": MEMBERS_SCHEMA,
    "partitions": PARTITIONS_SCHEMA,
    "offsets": OFFSETS_SCHEMA,
    "groups": GROUPS_SCHEMA,
}
REQUIRED_TABLES = ("members", "partitions", "offsets")
#: Columns a snapshot must have (the rest are optional and read as null when absent).
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "members": ("cluster", "group_id", "member_id", "topics"),
    "partitions": ("cluster", "topic", "partition"),
    "offsets": ("cluster", "group_id", "topic", "partition", "offset"),
    "groups": ("cluster", "group_id"),
}


class SnapshotError(ValueError):
    """A snapshot directory is missing a table or a column, or a column has the wrong type."""


def table_path(snapshot_dir: str, name: str) -> str:
    return os.path.join(snapshot_dir, f"{name}.parquet")


def _type_family(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list<" + _type_family(t.value_type) + ">"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{_type_family(f.type)}" for f in t) + ">"
    if pa.types.is_dictionary(t):
        return _type_family(t.value_type)
    return str(t)


def read_schema(path: str) -> pa.Schema:
    import pyarrow.dataset as ds

    return ds.dataset(path, format="parquet").schema


def check_snapshot(snapshot_dir: str) -> dict[str, pa.Schema | None]:
    """Check that ``snapshot_dir`` holds a readable snapshot; return each table's file schema
    (None for an absent optional table).

    Raises:
        SnapshotError: naming the missing table, missing column or wrongly typed column.
    """
    if not os.path.isdir(snapshot_dir):
        raise SnapshotError(f"snapshot {snapshot_dir!r}: not a directory")
    found: dict[str, pa.Schema | None] = {}
    for name, schema in TABLES.items():
        path = table_path(snapshot_dir, name)
        if not os.path.exists(path):
            if name in REQUIRED_TABLES:
                raise SnapshotError(f"snapshot {snapshot_dir!r}: missing table {name}.parquet")
            found[name] = None
            continue
        try:
            file_schema = read_schema(path)
        except Exception as e:  # pyarrow raises several types for unreadable files
            raise SnapshotError(f"snapshot table {path!r}: not readable as Parquet: {e}") from None
        missing = [c for c in REQUIRED_COLUMNS[name] if c not in file_schema.names]
        if missing:
            raise SnapshotError(
                f"snapshot table {name}.parquet: missing required column(s) {', '.join(missing)} "
                f"(has: {', '.join(file_schema.names)})"
            )
        for f in schema:
            if f.name in file_schema.names:
                got = _type_family(file_schema.field(f.name).type)
                want = _type_family(f.type)
                if got != want:
                    raise SnapshotError(
                        f"snapshot table {name}.parquet: column {f.name} has type "
                        f"{file_schema.field(f.name).type}, expected {f.type}"
                    )
        found[name] = file_schema
    return found


def write_meta(out: str, *, source: dict[str, Any], counts: dict[str, int]) -> None:
    meta = {
        "format": "kassign-fleet-snapshot",
        "version": FORMAT_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "rows": counts,
    }
    with open(os.path.join(out, "snapshot.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def write(tables: dict[str, pa.Table], out: str, *, source: dict[str, Any]) -> None:
    """Write snapshot tables as ``<out>/<name>.parquet`` plus ``<out>/snapshot.json``."""
    import pyarrow.parquet as pq

    os.makedirs(out, exist_ok=True)
    for name, table in tables.items():
        pq.write_table(table, os.path.join(out, f"{name}.parquet"), row_group_size=256 * 1024)
    write_meta(out, source=source, counts={name: t.num_rows for name, t in tables.items()})
