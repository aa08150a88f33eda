"""The fleet job's Spark plans: how each group's rows reach the per-group evaluation.

Data flow of the default plan, "stream" (:mod:`kassign.fleet.stream`)::

    partitions ─> driver: one row per (cluster, topic) with its partitions ─> Arrow file ┐ sc.addFile,
    offsets    ─> driver: grouped by (cluster, group_id)                  ─> Arrow file ┘ memory-mapped
    members ∪ (cluster, group_id, where its offsets are) ∪ groups
        ─> repartition(cluster, group_id) ─> sortWithinPartitions ─> mapInArrow(cut into groups,
           build each group's inputs, evaluate) ─> results.parquet

The earlier plan, "cogroup" (``--plan cogroup``), keeps every table in Spark: members.topics ⋈
partitions ⟕ offsets aggregated per (group, topic) with ``collect_list``, group markers, and
``groupBy.cogroup.applyInArrow`` (:func:`build_inputs`); it is the reference the stream plan is
tested against, and the choice when the partitions and offsets tables do not fit the driver's memory.

The per-group function is :func:`kassign.fleet.evaluate.evaluate_stream_group` in the stream plan
(the group's stream rows and the task's index of the two files go to the core, which builds the
group's inputs itself) and :func:`kassign.fleet.evaluate.evaluate_group_table` in the cogroup plan
(the group's two Arrow tables go to the core). Either way the Rust core builds the problem once,
runs every strategy, measures the results, computes the lags and replays churn, and returns the
result rows as Arrow. Every group with a member, an offset or a groups-table row reaches it; a
group without members comes out as an error row.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import stream
from .config import FleetError, is_local_path
from .group import result_schema
from .snapshot import REQUIRED_COLUMNS, TABLES, SnapshotError, check_snapshot, table_path

#: The members columns the job reads: the group's key and those the per-group evaluation reads
#: (kassign.fleet.evaluate); client_id and host stay out of the shuffle.
MEMBER_COLUMNS = ("cluster", "group_id", *stream.MEMBER_COLUMNS)


def read_table(
    spark: Any, snapshot: str, name: str, file_schema: pa.Schema | None = None, columns: Sequence[str] | None = None
) -> Any:
    """Read one snapshot table with every column of the format (absent optional ones as nulls), or
    only ``columns``. With the file's schema known (a local snapshot, checked before Spark starts),
    Spark is given it instead of inferring it (one Spark job less per table)."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema, from_arrow_type

    reader = spark.read
    if file_schema is not None:
        try:
            reader = reader.schema(from_arrow_schema(file_schema))
        except Exception:  # a file type with no Spark equivalent here (e.g. unsigned): Spark infers it
            pass
    df = reader.parquet(table_path(snapshot, name))
    missing = [c for c in REQUIRED_COLUMNS[name] if c not in df.columns]
    if missing:
        raise SnapshotError(f"snapshot table {name}.parquet: missing required column(s) {', '.join(missing)}")
    cols = []
    for f in TABLES[name]:
        if columns is not None and f.name not in columns:
            continue
        spark_type = from_arrow_type(f.type)
        if f.name in df.columns:
            cols.append(F.col(f.name).cast(spark_type).alias(f.name))
        else:
            cols.append(F.lit(None).cast(spark_type).alias(f.name))
    return df.select(*cols)


def _optional_groups(read: Any, local: bool, schemas: dict[str, Any]) -> Any:
    """``read("groups")``, or None when the optional groups table is absent: known from the checked
    schemas of a local snapshot, from the read's path error on a remote filesystem."""
    if local and schemas.get("groups") is None:
        return None
    try:
        return read("groups")
    except Exception as e:  # an absent optional table on a remote filesystem
        if "PATH_NOT_FOUND" not in str(e) and "Path does not exist" not in str(e):
            raise
    return None


def build_inputs(spark: Any, snapshot: str) -> tuple[Any, Any]:
    """(members, partition side) DataFrames keyed by (cluster, group_id)."""
    from pyspark.sql import functions as F

    local = is_local_path(snapshot)
    schemas = check_snapshot(snapshot.removeprefix("file://")) if local else {}

    def read(name: str, columns: Sequence[str] | None = None) -> Any:
        return read_table(spark, snapshot, name, schemas.get(name), columns)

    members = read("members", MEMBER_COLUMNS)
    partitions = read("partitions")
    offsets = read("offsets")
    groups = _optional_groups(read, local, schemas)
    key = ["cluster", "group_id"]
    members_again = read("members", ("cluster", "group_id", "topics"))  # a second lineage: no ambiguous self-join
    group_topics = (
        members_again.select(*key, F.explode("topics").alias("topic")).where(F.col("topic").isNotNull()).distinct()
    )
    # The partition side travels compactly: one row per (group, subscribed topic) carrying the
    # topic's partitions and the group's committed offsets as lists (tens of thousands of rows for
    # 10,000 groups instead of millions); the core expands them (rust/python/src/fleet.rs).
    parts_by_topic = partitions.groupBy("cluster", "topic").agg(
        F.collect_list(F.struct("partition", "replica_racks", "beginning_offset", "end_offset")).alias("parts")
    )
    offsets_by_topic = offsets.groupBy(*key, "topic").agg(
        F.collect_list(F.struct("partition", F.col("offset").alias("committed"))).alias("offsets")
    )
    gp = (
        group_topics.join(parts_by_topic, ["cluster", "topic"], "inner")
        .join(offsets_by_topic, [*key, "topic"], "left")
        .select(
            *key,
            "topic",
            "parts",
            "offsets",
            F.lit(None).cast("string").alias("state"),
            F.lit(None).cast("string").alias("protocol"),
            F.lit(None).cast("string").alias("group_protocol"),
        )
    )
    keys = members_again.select(*key).union(offsets.select(*key))
    if groups is not None:
        keys = keys.union(groups.select(*key))
    markers = keys.distinct()
    if groups is not None:
        markers = markers.join(
            groups.groupBy(*key).agg(
                F.first("state", ignorenulls=True).alias("state"),
                F.first("protocol", ignorenulls=True).alias("protocol"),
                F.first("group_protocol", ignorenulls=True).alias("group_protocol"),
            ),
            key,
            "left",
        )
    else:
        markers = markers.select(
            *key,
            F.lit(None).cast("string").alias("state"),
            F.lit(None).cast("string").alias("protocol"),
            F.lit(None).cast("string").alias("group_protocol"),
        )
    markers = markers.select(
        *key,
        F.lit(None).cast("string").alias("topic"),
        F.lit(None).cast(gp.schema["parts"].dataType).alias("parts"),
        F.lit(None).cast(gp.schema["offsets"].dataType).alias("offsets"),
        "state",
        "protocol",
        "group_protocol",
    )
    return members, gp.unionByName(markers)


#: How the job brings each group's rows together: "stream" (default): one exchange of the rows keyed
#: by group, sorted, to ``mapInArrow``, and the partitions table shipped to the executors as a file
#: (:mod:`kassign.fleet.stream`); "cogroup": the earlier plan (:func:`build_inputs`, then
#: ``groupBy.cogroup.applyInArrow``), kept as the reference the tests compare the stream with.
PLANS = ("stream", "cogroup")


def read_driver_table(spark: Any, snapshot: str, name: str, dictionary: Sequence[str] = ()) -> pa.Table:
    """A snapshot table in the driver as pyarrow (every column of the format, absent optional ones
    as nulls): read with pyarrow for a local snapshot (``dictionary`` columns as dictionaries, as
    the Parquet dictionary pages hold them: a fraction of the memory of one string per row), through
    Spark otherwise."""
    if not is_local_path(snapshot):
        return read_table(spark, snapshot, name).toArrow()
    import pyarrow.parquet as pq

    path = table_path(snapshot.removeprefix("file://"), name)
    schema = TABLES[name]
    names = [f.name for f in schema if f.name in pq.read_schema(_first_parquet(path)).names]
    t = pq.read_table(path, columns=names, read_dictionary=list(dictionary))
    cols = []
    for f in schema:
        if f.name not in names:
            cols.append(pa.chunked_array([pa.nulls(t.num_rows, f.type)]))
        elif pa.types.is_dictionary(t.schema.field(f.name).type) or f.name == "replica_racks":
            cols.append(t.column(f.name))  # kassign.fleet.stream reads dictionaries as they are
        else:
            cols.append(t.column(f.name).cast(f.type))
    return pa.Table.from_arrays(cols, names=[f.name for f in schema])


def _first_parquet(path: str) -> str:
    """``path``, or the first Parquet file under it when it is a directory (Spark's layout)."""
    if not os.path.isdir(path):
        return path
    for root, _, files in sorted(os.walk(path)):
        for name in sorted(files):
            if name.endswith(".parquet") and not name.startswith((".", "_")):
                return os.path.join(root, name)
    raise SnapshotError(f"snapshot table {path!r}: no Parquet file in the directory")


@dataclass
class StreamFiles:
    """The driver-packed tables of the stream plan, added to the Spark files (``sc.addFile``)."""

    partitions: str  # file name: kassign.fleet.stream.compact_partitions
    offsets: str  # file name: kassign.fleet.stream.pack_offsets' rows
    offset_keys: pa.Table  # pack_offsets' keys: (cluster, group_id, offsets_start, offsets_end)
    directory: str = ""  # where the driver wrote them


def pack_stream_files(spark: Any, snapshot: str) -> StreamFiles:
    """Pack the snapshot's partitions (per topic) and committed offsets (per group) into Arrow IPC
    files (:mod:`kassign.fleet.stream`) in a temporary directory. ``spark`` is only used for a
    snapshot that is not local (None is fine for a local one: the job packs while the JVM starts)."""
    import atexit
    import shutil
    import tempfile

    from .stream import pack_offsets, write_arrow, write_compact_partitions

    d = tempfile.mkdtemp(prefix="kassign-fleet-")
    atexit.register(shutil.rmtree, d, True)
    tag = f"{os.getpid()}-{int(time.time() * 1e6)}"
    names = (f"kassign-partitions-{tag}.arrow", f"kassign-offsets-{tag}.arrow")
    parts = read_driver_table(spark, snapshot, "partitions", ("cluster", "topic", *RACK_LEAVES))
    write_compact_partitions(parts, os.path.join(d, names[0]))
    del parts
    rows, keys = pack_offsets(read_driver_table(spark, snapshot, "offsets", ("cluster", "group_id", "topic")))
    write_arrow(rows, os.path.join(d, names[1]))
    del rows
    # give the tables' memory back to the system now: the driver idles through the job
    pa.default_memory_pool().release_unused()
    return StreamFiles(names[0], names[1], keys, d)


def stream_files(spark: Any, snapshot: str, packed: StreamFiles | None = None) -> StreamFiles:
    """The stream plan's files (:func:`pack_stream_files`, or ``packed`` when the driver packed them
    already), added to the Spark files."""
    files = packed if packed is not None else pack_stream_files(spark, snapshot)
    for name in (files.partitions, files.offsets):
        spark.sparkContext.addFile(os.path.join(files.directory, name))
    return files


#: The Parquet leaf of the rack names (Spark and pyarrow name a list's element differently).
RACK_LEAVES = ("replica_racks.list.element", "replica_racks.list.item")


def sorted_stream(spark: Any, snapshot: str, files: StreamFiles) -> Any:
    """The rows keyed by group, as one DataFrame: member rows (the columns of
    :data:`MEMBER_COLUMNS`), one row per group with committed offsets (where they are in the offsets
    file: ``offsets_start``, ``offsets_end``) and the groups-table rows (state, protocol,
    group_protocol), with ``kind`` (:data:`kassign.fleet.stream.KIND_MEMBER`, ...),
    hash-partitioned by (cluster, group_id) into ``spark.sql.shuffle.partitions`` partitions and
    sorted by group and kind within each (by a 64-bit hash of the key first: the sort compares
    numbers, not the two strings, except on a hash collision)."""
    from pyspark.sql import functions as F

    from .stream import KIND_GROUP, KIND_MEMBER, KIND_OFFSET

    local = is_local_path(snapshot)
    schemas = check_snapshot(snapshot.removeprefix("file://")) if local else {}

    def read(name: str, columns: Sequence[str]) -> Any:
        return read_table(spark, snapshot, name, schemas.get(name), ("cluster", "group_id", *columns))

    def kind(df: Any, k: int) -> Any:
        return df.withColumn("kind", F.lit(k).cast("byte"))

    keys = files.offset_keys
    if keys.num_rows:
        offset_rows = spark.createDataFrame(keys)
    else:
        offset_rows = spark.createDataFrame([], "cluster string, group_id string, offsets_start long, offsets_end long")
    both = kind(read("members", MEMBER_COLUMNS), KIND_MEMBER).unionByName(
        kind(offset_rows, KIND_OFFSET), allowMissingColumns=True
    )
    groups = _optional_groups(lambda name: read(name, stream.GROUP_COLUMNS), local, schemas)
    if groups is not None:
        both = both.unionByName(kind(groups, KIND_GROUP), allowMissingColumns=True)
    else:
        both = both.select("*", *(F.lit(None).cast("string").alias(c) for c in stream.GROUP_COLUMNS))
    columns = both.columns
    return (
        both.repartition("cluster", "group_id")
        .withColumn("_key_hash", F.xxhash64("cluster", "group_id"))
        .sortWithinPartitions("_key_hash", "cluster", "group_id", "kind")
        .select(*columns)
    )


def fleet_dataframe(
    spark: Any,
    snapshot: str,
    strategies: Sequence[str],
    *,
    churn: int = 0,
    with_assignment: bool = False,
    auto_offset_reset: str = "latest",
    seed: int = 0,
    counter: Any = None,
    plan: str = "stream",
    packed: StreamFiles | None = None,
) -> Any:
    """The result DataFrame (lazy): one row per (cluster, group_id, strategy). ``packed``: the stream
    plan's files when the driver packed them already (:func:`pack_stream_files`)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    if plan not in PLANS:
        raise FleetError(f"plan: expected one of {', '.join(PLANS)}, got {plan!r}")
    schema = result_schema(with_assignment)
    strategies = tuple(strategies)

    # The Python strategies' callables, made once per task (the closure is unpickled per task).
    prepared: dict[str, Any] = {}

    def options() -> dict[str, Any]:
        """The per-group evaluation's keyword arguments (in a task)."""
        from kassign.fleet.evaluate import python_strategies

        if "python" not in prepared:
            prepared["python"] = python_strategies(strategies)
        return dict(
            churn_rounds=churn,
            with_assignment=with_assignment,
            auto_offset_reset=auto_offset_reset,
            seed=seed,
            prepared=prepared["python"],
        )

    def evaluate(key: tuple[Any, ...], left: pa.Table, right: pa.Table) -> pa.Table:
        from kassign.fleet.evaluate import evaluate_group_table

        table = evaluate_group_table(key[0].as_py(), key[1].as_py(), left, right, strategies, **options())
        if counter is not None:
            counter.add(1)
        return table

    if plan == "cogroup":
        members, parts = build_inputs(spark, snapshot)
        return (
            members.groupBy("cluster", "group_id")
            .cogroup(parts.groupBy("cluster", "group_id"))
            .applyInArrow(evaluate, schema=from_arrow_schema(schema))
        )

    files = stream_files(spark, snapshot, packed)

    def evaluate_stream(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import SparkFiles

        from kassign.fleet.evaluate import evaluate_stream_group
        from kassign.fleet.stream import group_tables, stream_index

        index = stream_index(SparkFiles.get(files.partitions), SparkFiles.get(files.offsets))
        kw = options()
        done: list[pa.Table] = []
        rows = 0
        for group in group_tables(batches):
            table = evaluate_stream_group(group, index, strategies, **kw)
            if counter is not None:
                counter.add(1)
            done.append(table)
            rows += table.num_rows
            if rows >= RESULT_ROWS_PER_BATCH:
                yield from pa.concat_tables(done).combine_chunks().to_batches()
                done, rows = [], 0
        if done:
            yield from pa.concat_tables(done).combine_chunks().to_batches()

    return sorted_stream(spark, snapshot, files).mapInArrow(evaluate_stream, schema=from_arrow_schema(schema))


#: Result rows the stream plan's function gathers before it hands a batch back to Spark.
RESULT_ROWS_PER_BATCH = 2_000


def read_results(spark: Any, path: str) -> pa.Table:
    """The results the job wrote to ``path``, without the assignment column, in
    :func:`kassign.fleet.group.result_schema`'s types, sorted by (cluster, group_id) (each group's
    rows stay in the order the job wrote them: the strategies' order): read with pyarrow from a local
    path (no Spark job on the driver's cold JVM), else through Spark."""
    schema = result_schema(False)
    if is_local_path(path):
        import pyarrow.parquet as pq

        table = pq.read_table(path.removeprefix("file://"), columns=schema.names)
    else:
        table = spark.read.parquet(path).select(*schema.names).toArrow()
    table = table.replace_schema_metadata(None).cast(schema)
    return table.sort_by([("cluster", "ascending"), ("group_id", "ascending")])
