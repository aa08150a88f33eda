"""The fleet job's stream plan, Python side (pyarrow only; no pyspark import).

Spark does one exchange: the rows keyed by group (members, offsets, groups), unioned with a
``kind`` column, hash-partitioned by (cluster, group_id) and sorted by group and kind within each
partition, go to ``mapInArrow`` in batches of up to ``spark.sql.execution.arrow.maxRecordsPerBatch``
rows (not one Arrow hand-over per group and side, as ``cogroup.applyInArrow`` does).
:func:`group_tables` cuts the batches into groups at key boundaries with pyarrow compute (no Python
per row), joining the pieces of a group that straddles two batches.

The partitions table is keyed by (cluster, topic), not by group: the driver packs it once
(:func:`compact_partitions`: one row per topic with its partitions as a list, rack names
dictionary-encoded) into an Arrow IPC file that reaches every executor as a Spark file and is
memory-mapped there (:class:`PartitionIndex`), as a broadcast join would ship a dimension table.
:func:`stream_index` hands the two files to the core, read once per task; then each group's
stream rows go to :func:`kassign.fleet.evaluate.evaluate_stream_group`, which builds the two tables
the core's evaluation reads (the member rows and the partition side: one row per subscribed topic
that has partitions, with the topic's partitions and the group's committed offsets of it, plus one
marker row with the group's state and protocols), without pyarrow calls per group. The tests'
Python reference of that step is ``tests/oracles/fleet_stream.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from .snapshot import MEMBERS_SCHEMA

#: ``kind`` of a member row, a group's committed-offsets row (where its offsets are in the offsets
#: file) and a groups-table row in the stream.
KIND_MEMBER = 0
KIND_OFFSET = 1
KIND_GROUP = 2
KEY = ("cluster", "group_id")

PART_FIELDS = ("partition", "replica_racks", "beginning_offset", "end_offset")


def _run_starts(table: pa.Table | pa.RecordBatch, key: Sequence[str]) -> list[int]:
    """Row indices where a run of equal ``key`` values starts (0 first); nulls equal each other."""
    import numpy as np
    import pyarrow.compute as pc

    n = table.num_rows
    if n <= 1:
        return [0][:n]
    changed = None
    for name in key:
        col = table.column(name)
        a, b = col.slice(1), col.slice(0, n - 1)
        differ = pc.fill_null(pc.not_equal(a, b), True)
        differ = pc.and_(differ, pc.invert(pc.and_(pc.is_null(a), pc.is_null(b))))
        changed = differ if changed is None else pc.or_(changed, differ)
    assert changed is not None
    return [0, *(np.flatnonzero(changed.to_numpy(zero_copy_only=False)) + 1).tolist()]


def _key_at(batch: pa.RecordBatch, row: int, key: Sequence[str]) -> tuple[Any, ...]:
    return tuple(batch.column(name)[row].as_py() for name in key)


def group_tables(batches: Iterable[pa.RecordBatch], key: Sequence[str] = KEY) -> Iterator[pa.Table]:
    """One table per run of equal ``key`` in ``batches`` (a stream clustered by ``key``, e.g. sorted):
    zero-copy slices of the batches; a run continued in the next batch comes out once, whole."""
    pending: list[pa.RecordBatch] = []
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        starts = _run_starts(batch, key)
        runs = list(zip(starts, [*starts[1:], n]))
        if pending and _key_at(pending[-1], pending[-1].num_rows - 1, key) == _key_at(batch, 0, key):
            s, e = runs.pop(0)
            pending.append(batch.slice(s, e - s))
            if not runs:
                continue
        if pending:
            yield pa.Table.from_batches(pending)
        for s, e in runs[:-1]:
            yield pa.Table.from_batches([batch.slice(s, e - s)])
        s, e = runs[-1]
        pending = [batch.slice(s, e - s)]
    if pending:
        yield pa.Table.from_batches(pending)


# -- the partitions table, packed per topic -------------------------------------------------------

PARTS_TYPE = pa.list_(
    pa.struct(
        [
            pa.field("partition", pa.int32()),
            pa.field("replica_racks", pa.list_(pa.dictionary(pa.int32(), pa.string()))),
            pa.field("beginning_offset", pa.int64()),
            pa.field("end_offset", pa.int64()),
        ]
    )
)
OFFSETS_TYPE = pa.list_(pa.struct([pa.field("partition", pa.int32()), pa.field("committed", pa.int64())]))


def _dictionary(col: pa.ChunkedArray) -> pa.DictionaryArray:
    """``col`` (strings or dictionaries) as one dictionary array."""
    import pyarrow.compute as pc

    if pa.types.is_dictionary(col.type):
        return pa.table({"c": col}).unify_dictionaries().column(0).combine_chunks()
    return pc.dictionary_encode(col.combine_chunks())


def _rack_lists(col: pa.ChunkedArray) -> pa.ListArray:
    """A list<string> or list<dictionary<string>> column as one list<dictionary<int32, string>>
    array with one dictionary (the chunks' dictionaries unified: rack names are few)."""
    import pyarrow.compute as pc

    names: dict[Any, int] = {}
    chunks = []
    for chunk in col.chunks:
        offsets = chunk.offsets  # a slice's offsets index into its whole child: rebase them
        start = offsets[0].as_py() if len(offsets) else 0
        values = chunk.values.slice(start, (offsets[-1].as_py() - start) if len(offsets) else 0)
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
        if not pa.types.is_dictionary(values.type):
            values = pc.dictionary_encode(values)
        local = [names.setdefault(v, len(names)) for v in values.dictionary.to_pylist()]
        codes = pc.take(pa.array(local, pa.int32()), values.indices)
        mask = chunk.is_null() if chunk.null_count else None
        chunks.append(pa.ListArray.from_arrays(offsets, codes, mask=mask))
    lists = pa.concat_arrays(chunks) if chunks else pa.array([], pa.list_(pa.int32()))
    dictionary = pa.array(list(names), pa.string())
    values = pa.DictionaryArray.from_arrays(lists.values, dictionary)
    return pa.ListArray.from_arrays(lists.offsets, values, mask=lists.is_null())


def _coded(t: pa.Table, a: str, b: str) -> tuple[pa.Table, pa.DictionaryArray, pa.DictionaryArray, pa.Array]:
    """``t`` without the rows where column ``a`` or ``b`` is null, those two columns as dictionary
    arrays, and one int64 code per row for the pair (equal pairs, equal codes)."""
    import pyarrow.compute as pc

    valid = pc.and_(pc.is_valid(t.column(a)), pc.is_valid(t.column(b)))
    if not pc.all(valid).as_py():
        t = t.filter(valid)
    da, db = _dictionary(t.column(a)), _dictionary(t.column(b))
    code = pc.add(pc.multiply(da.indices.cast(pa.int64()), len(db.dictionary)), db.indices.cast(pa.int64()))
    return t, da, db, code


def compact_partitions(partitions: pa.Table) -> pa.Table:
    """The partitions table (columns of ``PARTITIONS_SCHEMA``; cluster, topic and rack names may be
    dictionary-encoded) as one row per (cluster, topic): ``cluster``, ``topic``, ``parts``
    (:data:`PARTS_TYPE`: every row of that topic, in file order; rack names dictionary-encoded).
    Rows whose cluster or topic is null are dropped (no group's topic can match them)."""
    import pyarrow.compute as pc

    t, cluster, topic, code = _coded(partitions.select(["cluster", "topic", *PART_FIELDS]), "cluster", "topic")
    n = t.num_rows
    starts = _run_starts(pa.table({"code": code}), ["code"])
    racks = _rack_lists(t.column("replica_racks"))
    columns = [
        t.column("partition").combine_chunks().cast(pa.int32()),
        racks.cast(PARTS_TYPE.value_type.field("replica_racks").type),
        t.column("beginning_offset").combine_chunks().cast(pa.int64()),
        t.column("end_offset").combine_chunks().cast(pa.int64()),
    ]
    if len(starts) != pc.count_distinct(code).as_py():  # not grouped by topic: a stable sort
        order = pc.sort_indices(code)
        code, columns = code.take(order), [c.take(order) for c in columns]
        cluster, topic = cluster.take(order), topic.take(order)
        starts = _run_starts(pa.table({"code": code}), ["code"])
    structs = pa.StructArray.from_arrays(columns, fields=list(PARTS_TYPE.value_type))
    parts = pa.ListArray.from_arrays(pa.array([*starts, n], pa.int32()), structs, type=PARTS_TYPE)
    first = pa.array(starts, pa.int64())
    return pa.table(
        {
            "cluster": cluster.take(first).cast(pa.string()),
            "topic": topic.take(first).cast(pa.string()),
            "parts": parts,
        }
    )


def write_compact_partitions(partitions: pa.Table, path: str) -> int:
    """:func:`compact_partitions` of ``partitions`` as an Arrow IPC file at ``path``; its rows."""
    table = compact_partitions(partitions)
    write_arrow(table, path)
    return int(table.num_rows)


def pack_offsets(offsets: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(rows, keys) of the offsets table (columns of ``OFFSETS_SCHEMA``): ``rows`` = topic, partition,
    offset, grouped by (cluster, group_id) in a stable order; ``keys`` = cluster, group_id,
    ``offsets_start``, ``offsets_end``: where each group's rows are. Rows with a null cluster or
    group_id are dropped (no group can match them)."""
    import pyarrow.compute as pc

    t, cluster, group, code = _coded(
        offsets.select(["cluster", "group_id", "topic", "partition", "offset"]), "cluster", "group_id"
    )
    topic = t.column("topic")
    topic = topic.cast(pa.string()) if pa.types.is_dictionary(topic.type) else topic
    rows = pa.table(
        {
            "topic": _dictionary(topic) if t.num_rows else pa.array([], pa.dictionary(pa.int32(), pa.string())),
            "partition": t.column("partition").combine_chunks().cast(pa.int32()),
            "offset": t.column("offset").combine_chunks().cast(pa.int64()),
        }
    )
    starts = _run_starts(pa.table({"code": code}), ["code"])
    if len(starts) != pc.count_distinct(code).as_py():  # not grouped by group: a stable sort
        order = pc.sort_indices(code)
        code, rows = code.take(order), rows.take(order)
        cluster, group = cluster.take(order), group.take(order)
        starts = _run_starts(pa.table({"code": code}), ["code"])
    first = pa.array(starts, pa.int64())
    keys = pa.table(
        {
            "cluster": cluster.take(first).cast(pa.string()),
            "group_id": group.take(first).cast(pa.string()),
            "offsets_start": first,
            "offsets_end": pa.array([*starts[1:], t.num_rows][: len(starts)], pa.int64()),
        }
    )
    return rows.combine_chunks(), keys


def write_arrow(table: pa.Table, path: str) -> None:
    """``table`` as an Arrow IPC file at ``path``, one record batch (memory-mapped by the readers)."""
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table.combine_chunks(), max_chunksize=max(table.num_rows, 1))


def _read_arrow(path: str) -> pa.Table:
    """A :func:`write_arrow` file, memory-mapped (no copy: the pages are shared between processes)."""
    return pa.ipc.open_file(pa.memory_map(path, "r")).read_all()


class PartitionIndex:
    """A :func:`write_compact_partitions` file, memory-mapped: the parts of a (cluster, topic); and
    a :func:`pack_offsets` rows file: the group's committed offsets, by position.

    The name lookups (``rows``, ``offset_topic_codes``) are built once per process and path; the
    files are mapped again for each instance, so a task that drops its instance takes the pages it
    touched out of its process's resident set (a task reads about 1/tasks of the fleet)."""

    def __init__(self, path: str, offsets_path: str | None = None) -> None:
        table = _read_arrow(path)
        self.parts = table.column("parts").chunk(0) if table.num_rows else pa.array([], PARTS_TYPE)
        self.offsets = _read_arrow(offsets_path) if offsets_path else None
        names = _NAMES.get((path, offsets_path))
        if names is None:
            keys = zip(table.column("cluster").to_pylist(), table.column("topic").to_pylist())
            rows = {k: i for i, k in enumerate(keys)}
            codes: dict[str, int] = {}
            if self.offsets is not None and self.offsets.num_rows:
                topics = self.offsets.column("topic").chunk(0).dictionary.to_pylist()
                codes = {t: i for i, t in enumerate(topics) if t is not None}
            names = _NAMES[(path, offsets_path)] = (rows, codes)
        #: (cluster, topic) -> its row in the partitions file
        self.rows: dict[tuple[str, str], int] = names[0]
        #: topic name -> its code in the offsets file's topic dictionary (one dictionary: pack_offsets)
        self.offset_topic_codes: dict[str, int] = names[1]


_NAMES: dict[tuple[str, str | None], tuple[dict[tuple[str, str], int], dict[str, int]]] = {}


def stream_index(path: str, offsets_path: str | None = None) -> Any:
    """The files of :class:`PartitionIndex`, memory-mapped, as the core's index
    (``kassign._core.StreamIndex``): what the job's tasks hand
    :func:`kassign.fleet.evaluate.evaluate_stream_group` with each group's stream rows. The core
    then builds the group's inputs itself (the tests compare it with the Python reference,
    ``tests/oracles/fleet_stream.py``)."""
    from .. import _core

    return _core.StreamIndex(_read_arrow(path), _read_arrow(offsets_path) if offsets_path else None)


def partition_index(path: str, offsets_path: str | None = None) -> PartitionIndex:
    """A :class:`PartitionIndex` of these files (the files mapped anew, the lookups reused)."""
    return PartitionIndex(path, offsets_path)


# -- one group's inputs ---------------------------------------------------------------------------

#: The member columns the Rust core reads (kassign.fleet.evaluate): every column of the members
#: table but the group's key and the two it does not use (client_id, host).
MEMBER_COLUMNS = tuple(f.name for f in MEMBERS_SCHEMA if f.name not in ("cluster", "group_id", "client_id", "host"))
#: The groups-table columns a group's marker row carries.
GROUP_COLUMNS = ("state", "protocol", "group_protocol")
