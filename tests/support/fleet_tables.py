"""One group's input tables as the fleet job's per-group evaluation takes them, built from row
dicts without Spark (tests/oracles/test_fleet_*, tests/spark/test_spark_group.py,
tests/spark/test_spark_migration.py).

The member side is the snapshot's members table without its group key (``cluster``,
``group_id``); the partition side is the group's partitions joined with its committed offsets,
plus marker rows (``topic`` null) that carry the groups table's ``state``, ``protocol`` and
``group_protocol`` (the columns of :data:`oracles.fleet_group.PARTITION_COLUMNS`). A key a row
dict leaves out is null.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from kassign.fleet.snapshot import MEMBERS_SCHEMA

#: The member side of one group.
MEMBERS_SIDE_SCHEMA = pa.schema([f for f in MEMBERS_SCHEMA if f.name not in ("cluster", "group_id")])

#: The partition side of one group.
PARTS_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("replica_racks", pa.list_(pa.string())),
        ("beginning_offset", pa.int64()),
        ("end_offset", pa.int64()),
        ("committed", pa.int64()),
        ("state", pa.string()),
        ("protocol", pa.string()),
        ("group_protocol", pa.string()),
    ]
)


def members_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """The member side of one group from one dict per member."""
    return pa.Table.from_pylist(list(rows), schema=MEMBERS_SIDE_SCHEMA)


def parts_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """The partition side of one group from one dict per row (partition rows and marker rows)."""
    return pa.Table.from_pylist(list(rows), schema=PARTS_SCHEMA)
