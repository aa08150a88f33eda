"""The Python reference of the stream plan's per-group inputs (formerly
``kassign.fleet.stream.group_inputs``): the member rows and the partition side of one group, built
with pyarrow from its stream rows and the :class:`kassign.fleet.stream.PartitionIndex`. The job
builds them in the core (:func:`kassign.fleet.evaluate.evaluate_stream_group`); the tests compare
the two (test_fleet_stream_core.py).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kassign.fleet.stream import (
    GROUP_COLUMNS,
    KIND_GROUP,
    KIND_MEMBER,
    KIND_OFFSET,
    MEMBER_COLUMNS,
    OFFSETS_TYPE,
    PARTS_TYPE,
    PartitionIndex,
)

SIDE_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string()),
        pa.field("parts", PARTS_TYPE),
        pa.field("offsets", OFFSETS_TYPE),
        pa.field("state", pa.string()),
        pa.field("protocol", pa.string()),
        pa.field("group_protocol", pa.string()),
    ]
)


def _first_valid(col: pa.ChunkedArray) -> Any:
    import pyarrow.compute as pc

    valid = pc.drop_null(col)
    return valid[0].as_py() if len(valid) else None


def group_inputs(group: pa.Table, index: PartitionIndex) -> tuple[str, str, pa.Table, pa.Table]:
    """(cluster, group_id, member rows, partition side) of one group's stream rows (sorted by
    ``kind``; filtered by it otherwise), as :func:`kassign.fleet.evaluate.evaluate_group_table`
    reads them. The job builds these inputs in the core instead (:func:`stream_index`,
    :func:`kassign.fleet.evaluate.evaluate_stream_group`); this is their Python reference. The
    partition side has one row per distinct subscribed topic (first-seen order) that has
    partitions in the group's cluster, with its ``parts`` and the group's committed ``offsets`` of
    it (null when none), then one marker row (``topic`` null) with the first non-null state,
    protocol and group protocol of the group's groups-table rows."""
    import numpy as np
    import pyarrow.compute as pc

    cluster = group.column("cluster")[0].as_py()
    group_id = group.column("group_id")[0].as_py()
    kind = group.column("kind").to_numpy()
    counts = np.bincount(kind, minlength=3)
    if bool(np.all(kind[:-1] <= kind[1:])):
        m, o = int(counts[KIND_MEMBER]), int(counts[KIND_OFFSET])
        members, offsets, groups = group.slice(0, m), group.slice(m, o), group.slice(m + o)
    else:
        members, offsets, groups = (group.filter(pa.array(kind == k)) for k in (KIND_MEMBER, KIND_OFFSET, KIND_GROUP))
    members = members.select(list(MEMBER_COLUMNS))

    rows: list[int] = []
    names: list[str] = []
    if members.num_rows:
        for t in pc.unique(pc.drop_null(pc.list_flatten(members.column("topics")))).to_pylist():
            row = index.rows.get((cluster, t))
            if row is not None:
                rows.append(row)
                names.append(t)
    k = len(names)
    # slices joined (a take of nested lists costs ~10x more); the marker row last, null
    parts = pa.concat_arrays([*(index.parts.slice(r, 1) for r in rows), pa.nulls(1, PARTS_TYPE)])

    # the group's committed offsets per topic, as lists (null for a topic without any)
    offs = pa.nulls(k + 1, OFFSETS_TYPE)
    if names and index.offsets is not None and offsets.num_rows:
        spans = [
            (s, e)
            for s, e in zip(offsets.column("offsets_start").to_pylist(), offsets.column("offsets_end").to_pylist())
            if s is not None and e is not None and e > s
        ]
        if spans:
            if len(spans) == 1:
                own = index.offsets.slice(spans[0][0], spans[0][1] - spans[0][0])
            else:
                own = pa.concat_tables([index.offsets.slice(s, e - s) for s, e in spans])
            # topics as codes of the file's one dictionary: no Python string per offset row
            codes = own.column("topic").combine_chunks().indices.to_numpy(zero_copy_only=False)
            pieces = []
            bounds = [0]
            missing = []
            for t in names:
                code = index.offset_topic_codes.get(t)
                found = np.flatnonzero(codes == code) if code is not None else np.empty(0, np.int64)
                pieces.append(found)
                bounds.append(bounds[-1] + len(found))
                missing.append(len(found) == 0)
            if bounds[-1]:
                taken = pa.array(np.concatenate(pieces), pa.int64())
                values = pa.StructArray.from_arrays(
                    [
                        own.column("partition").take(taken).combine_chunks(),
                        own.column("offset").take(taken).combine_chunks(),
                    ],
                    fields=list(OFFSETS_TYPE.value_type),
                )
                offs = pa.ListArray.from_arrays(
                    pa.array([*bounds, bounds[-1]], pa.int32()), values, mask=pa.array([*missing, True])
                )

    marker = [_first_valid(groups.column(c)) if groups.num_rows else None for c in GROUP_COLUMNS]
    nothing = [None] * k
    side = pa.Table.from_arrays(
        [
            pa.array([*names, None], pa.string()),
            parts,
            offs,
            pa.array([*nothing, marker[0]], pa.string()),
            pa.array([*nothing, marker[1]], pa.string()),
            pa.array([*nothing, marker[2]], pa.string()),
        ],
        schema=SIDE_SCHEMA,
    )
    return cluster, group_id, members, side
