"""The fleet job on PySpark: every strategy on every consumer group of a snapshot.

Data flow of the default plan, "stream" (:mod:`kassign.fleet.stream`)::

    partitions ─> driver: one row per (cluster, topic) with its partitions ─> Arrow file ┐ sc.addFile,
    offsets    ─> driver: grouped by (cluster, group_id)                  ─> Arrow file ┘ memory-mapped
    members ∪ (cluster, group_id, where its offsets are) ∪ groups
        ─> repartition(cluster, group_id) ─> sortWithinPartitions ─> mapInArrow(cut into groups,
           build each group's inputs, evaluate) ─> results.parquet -> HTML report, console summary

The earlier plan, "cogroup" (``--plan cogroup``), keeps every table in Spark: members.topics ⋈
partitions ⟕ offsets aggregated per (group, topic) with ``collect_list``, group markers, and
``groupBy.cogroup.applyInArrow`` (:func:`build_inputs`); it is the reference the stream plan is
tested against, and the choice when the partitions and offsets tables do not fit the driver's memory.
On the 10,000-group fleet Spark alone (no-op per-group function) took 177-214 s with it and 67 s
with the stream plan (docs/fleet.md).

The per-group function is :func:`kassign.fleet.evaluate.evaluate_stream_group` in the stream plan
(the group's stream rows and the task's index of the two files go to the core, which builds the
group's inputs itself) and :func:`kassign.fleet.evaluate.evaluate_group_table` in the cogroup plan
(the group's two Arrow tables go to the core). Either way the Rust core builds the problem once,
runs every strategy, measures the results and replays churn, and returns the result rows as Arrow
(the Python reference it is tested against is :func:`kassign.fleet.group.evaluate_group`). Every
group with a member, an offset or a groups-table row reaches it; a group without members comes out
as an error row.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

import kassign

from . import DEFAULT_DRIVER_MEMORY, classarchive, stream
from .group import result_schema
from .snapshot import REQUIRED_COLUMNS, TABLES, SnapshotError, check_snapshot, table_path

DEFAULT_FLEET_GROUPS = 300
DEFAULT_FLEET_SEED = 0


class FleetError(ValueError):
    """Bad job arguments (unknown strategy, unreadable snapshot); raised before Spark starts."""


@dataclass
class FleetConfig:
    snapshot: str | None = None
    strategies: Sequence[str] = ()
    #: Spark master URL; None: the one spark-submit was given, else local[*].
    master: str | None = None
    out: str = "fleet-report"
    churn: int = 0
    with_assignment: bool = False
    auto_offset_reset: str = "latest"
    seed: int = 0
    shuffle_partitions: int | None = None
    driver_memory: str = DEFAULT_DRIVER_MEMORY
    spark_conf: dict[str, str] = field(default_factory=dict)
    progress: bool = True
    report: bool = True
    ship_kassign: bool = False
    #: :data:`PLANS`: "stream" (default) or the earlier "cogroup".
    plan: str = "stream"
    #: The driver JVM's class archive (:mod:`kassign.fleet.classarchive`): "auto" (default), "use" or
    #: "off".
    class_archive: str = "auto"


def check_strategies(strategies: Sequence[str]) -> tuple[str, ...]:
    """The requested strategies, or every label of :func:`kassign.fleet.group.strategy_labels`
    (kassign.STRATEGIES and lag-aware's modes); unknown names are a FleetError."""
    from .group import strategy_labels

    labels = strategy_labels()
    if not strategies:
        return labels
    unknown = [s for s in strategies if s not in labels]
    if unknown:
        raise FleetError(
            f"unknown strateg{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}; "
            f"this build has: {', '.join(labels)}"
        )
    return tuple(dict.fromkeys(strategies))


#: Member rows per shuffle partition when the default partition count is scaled to the snapshot:
#: about 100 groups (a few seconds of Python work) per task, so progress moves in small steps and
#: no single Python worker holds a large share of the fleet.
MEMBER_ROWS_PER_PARTITION = 20_000
MAX_DEFAULT_PARTITIONS = 2_000


def default_partitions(snapshot: str, parallelism: int) -> int:
    """``spark.sql.shuffle.partitions`` when ``--partitions`` is not given: 4 x cores (at least 8),
    or more for a big snapshot (one per ``MEMBER_ROWS_PER_PARTITION`` member rows, local paths)."""
    base = max(8, 4 * parallelism)
    rows = member_rows(snapshot)
    if rows is None:
        return base
    return max(base, min(MAX_DEFAULT_PARTITIONS, -(-rows // MEMBER_ROWS_PER_PARTITION)))


def member_rows(snapshot: str | None) -> int | None:
    """Rows of a local snapshot's members table (from the Parquet footers); None when unknown."""
    if snapshot is None or not _is_local_path(snapshot):
        return None
    try:
        import pyarrow.dataset as ds

        return int(ds.dataset(table_path(snapshot.removeprefix("file://"), "members"), format="parquet").count_rows())
    except Exception:  # unreadable here: Spark reports it
        return None


def _is_local_path(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def default_fleet(out: str, log: Any = None) -> str:
    """The bundled default fleet: ``DEFAULT_FLEET_GROUPS`` synthetic groups (seed 0), generated
    once under ``<out>/default-fleet``."""
    from .synth import synth

    path = os.path.join(out, "default-fleet")
    marker = os.path.join(path, "snapshot.json")
    if not os.path.exists(marker):
        t0 = time.perf_counter()
        stats = synth(DEFAULT_FLEET_GROUPS, path, seed=DEFAULT_FLEET_SEED)
        if log:
            log(
                f"generated the default fleet ({stats.groups} groups, {stats.members} members, "
                f"{stats.partitions} partitions, seed {DEFAULT_FLEET_SEED}) in {time.perf_counter() - t0:.1f}s "
                f"at {path}"
            )
    elif log:
        log(f"using the default fleet at {path}")
    return path


_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
# PySpark counts as an interpreter: Spark prints "Setting default log level to ..." unless the
# logger of the class that first logs (the Py4J gateway) has a level of its own, equal to the root
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


#: JVM options of the driver (in local mode, the whole Spark side) for a small snapshot: the JIT's
#: first tier only and the serial collector. The JVM work of a small job is short; on a small machine
#: the optimising compiler's and the parallel collector's threads took the cores from the Python
#: workers: the demo's job went from 134 s to 67 s and its peak RSS from 1.7 to 1.2 GiB
#: (docs/fleet.md, "Measured"). ``--conf spark.driver.extraJavaOptions=...`` replaces them.
DRIVER_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: ... and for a big one (:data:`BIG_SNAPSHOT_MEMBER_ROWS` member rows or more): the optimising
#: compiler (C2) pays for itself on millions of rows (10,000-group fleet, no-op per-group function:
#: 79 s with C1 only, 67 s with C2; executor CPU 38 s vs 17 s; docs/fleet.md).
BIG_DRIVER_JVM_OPTIONS = "-XX:+UseSerialGC"
BIG_SNAPSHOT_MEMBER_ROWS = 200_000


#: ``MALLOC_ARENA_MAX`` of the JVM that ``kassign fleet`` starts in local mode (unless set).
MALLOC_ARENA_MAX = 2


def driver_jvm_options(snapshot: str | None) -> str:
    """:data:`BIG_DRIVER_JVM_OPTIONS` for a local snapshot with at least
    :data:`BIG_SNAPSHOT_MEMBER_ROWS` member rows, else :data:`DRIVER_JVM_OPTIONS`."""
    rows = member_rows(snapshot)
    return BIG_DRIVER_JVM_OPTIONS if rows is not None and rows >= BIG_SNAPSHOT_MEMBER_ROWS else DRIVER_JVM_OPTIONS


def quiet_spark_env(master: str, jvm_options: str = DRIVER_JVM_OPTIONS) -> list[tuple[str, str]]:
    """Environment and JVM options for a quiet local run: workers use this interpreter, Spark
    logs errors only, and pandas-version FutureWarnings stay out of the console."""
    import tempfile
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    # spark-submit's launcher (a JVM that only builds the driver's command line) too
    os.environ.setdefault("SPARK_LAUNCHER_OPTS", DRIVER_JVM_OPTIONS)
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # glibc's malloc gives each thread that allocates natively (shuffle compression, Parquet,
        # Netty) an arena of its own; the JVM's RSS on the 10,000-group fleet swung between 0.8 and
        # 1.5 GiB from run to run with the default (8 x cores), 0.8 GiB with 2 (docs/fleet.md)
        os.environ.setdefault("MALLOC_ARENA_MAX", str(MALLOC_ARENA_MAX))
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYTHONWARNINGS", "ignore::FutureWarning")
    path = os.path.join(tempfile.gettempdir(), "kassign-log4j2.properties")
    with open(path, "w", encoding="utf-8") as f:
        f.write(_LOG4J)
    return [
        ("spark.driver.extraJavaOptions", f"{jvm_options} -Dlog4j.configurationFile=file:{path}"),
        ("spark.executorEnv.PYTHONWARNINGS", "ignore::FutureWarning"),
    ]


#: Directory name of the shipped package in the executors' working directory (``--ship-kassign``).
SHIPPED_PACKAGE = "kassign-package"


def package_archive(out: str) -> str:
    """Pack the kassign package this process runs (Python code and the compiled extension) as
    ``<out>/kassign-package.tar.gz`` for ``spark.archives``; returns its absolute path."""
    import tarfile

    pkg = os.path.dirname(os.path.abspath(kassign.__file__))
    path = os.path.join(os.path.abspath(out), f"{SHIPPED_PACKAGE}.tar.gz")

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return None if "__pycache__" in info.name or info.name.endswith(".pyc") else info

    with tarfile.open(path, "w:gz") as tar:
        tar.add(pkg, arcname="kassign", filter=keep)
    return path


def ship_conf(archive: str, conf: dict[str, str]) -> dict[str, str]:
    """Spark settings that send ``archive`` to every executor, unpacked as ``kassign-package/`` in
    its working directory, and put it first on the Python workers' path."""
    archives = [a for a in conf.get("spark.archives", "").split(",") if a]
    path = [p for p in conf.get("spark.executorEnv.PYTHONPATH", "").split(os.pathsep) if p]
    return {
        "spark.archives": ",".join([*archives, f"{archive}#{SHIPPED_PACKAGE}"]),
        "spark.executorEnv.PYTHONPATH": os.pathsep.join([SHIPPED_PACKAGE, *path]),
    }


def effective_master(cfg: FleetConfig) -> str | None:
    """``cfg.master``; without one, None under spark-submit (its ``--master`` stands), else
    ``local[*]``."""
    if cfg.master:
        return cfg.master
    return None if "PYSPARK_GATEWAY_PORT" in os.environ else "local[*]"


def class_archive_plan(cfg: FleetConfig) -> classarchive.Plan:
    """What the session this job starts does with the class archive: nothing when a JVM runs
    already (spark-submit, or an earlier session in this process) or when ``--conf`` sets the
    driver's JVM options (they replace the job's)."""
    from pyspark import SparkContext

    if (
        "PYSPARK_GATEWAY_PORT" in os.environ
        or SparkContext._gateway is not None
        or "spark.driver.extraJavaOptions" in cfg.spark_conf
    ):
        return classarchive.Plan(None, "")
    return classarchive.plan(cfg.class_archive)


def spark_session(cfg: FleetConfig, archive: classarchive.Plan | None = None) -> Any:
    """The job's Spark session; ``archive`` adds the class archive's JVM options."""
    from pyspark.sql import SparkSession

    master = effective_master(cfg)
    jvm = driver_jvm_options(cfg.snapshot)
    if archive is not None and archive.jvm_options:
        jvm = f"{jvm} {archive.jvm_options}"
    quiet = quiet_spark_env(master or "", jvm)
    conf = dict(cfg.spark_conf)
    if cfg.ship_kassign:
        conf.update(ship_conf(package_archive(cfg.out), conf))
    b = SparkSession.builder
    if master:
        b = b.master(master)
    b = (
        b.appName("kassign-fleet")
        .config("spark.driver.memory", cfg.driver_memory)
        .config("spark.ui.showConsoleProgress", "false")
        # keep the per-group stage's task count (progress moves task by task; the accumulator of
        # groups done reaches the driver when a task ends): no AQE coalescing of shuffle partitions
        .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
        # Arrow batches to Python: 10,000 rows (the stream plan's batches hold many groups; larger
        # ones only grow the JVM's off-heap buffers)
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "10000")
    )
    for k, v in [*quiet, *conf.items()]:
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


#: The members columns the job reads: the group's key and those the per-group evaluation reads
#: (kassign.fleet.evaluate); client_id and host stay out of the shuffle.
MEMBER_COLUMNS = ("cluster", "group_id", *stream.MEMBER_COLUMNS)


def _read_table(
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

    local = _is_local_path(snapshot)
    schemas = check_snapshot(snapshot.removeprefix("file://")) if local else {}

    def read(name: str, columns: Sequence[str] | None = None) -> Any:
        return _read_table(spark, snapshot, name, schemas.get(name), columns)

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
    # 10,000 groups instead of millions); the core expands them (rust/src/py/fleet.rs).
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
    if not _is_local_path(snapshot):
        return _read_table(spark, snapshot, name).toArrow()
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
    parts = read_driver_table(spark, snapshot, "partitions", ("cluster", "topic", *_RACK_LEAVES))
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
_RACK_LEAVES = ("replica_racks.list.element", "replica_racks.list.item")


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

    local = _is_local_path(snapshot)
    schemas = check_snapshot(snapshot.removeprefix("file://")) if local else {}

    def read(name: str, columns: Sequence[str]) -> Any:
        return _read_table(spark, snapshot, name, schemas.get(name), ("cluster", "group_id", *columns))

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


class _ProgressThread(threading.Thread):
    """Polls Spark's status tracker and the groups-done accumulator; one line on stderr."""

    def __init__(self, spark: Any, counter: Any, stream: Any, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.sc = spark.sparkContext
        self.counter, self.stream, self.interval = counter, stream, interval
        self.stop_event = threading.Event()
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.t0 = time.monotonic()
        self.last_line = ""

    def line(self) -> str:
        st = self.sc.statusTracker()
        parts = []
        for sid in st.getActiveStageIds():
            info = st.getStageInfo(sid)
            if info is not None:
                parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
        groups = self.counter.value if self.counter is not None else 0
        return f"[fleet {time.monotonic() - self.t0:5.0f}s] groups done: {groups}  " + "  ".join(parts)

    def run(self) -> None:
        last_print = 0.0
        while not self.stop_event.wait(self.interval):
            try:
                text = self.line()
            except Exception:
                continue
            now = time.monotonic()
            if self.tty:
                self.stream.write("\r" + text.ljust(len(self.last_line)))
                self.stream.flush()
            elif text != self.last_line and now - last_print >= 10:
                self.stream.write(text + "\n")
                self.stream.flush()
                last_print = now
            self.last_line = text

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=5)
        if self.tty and self.last_line:
            self.stream.write("\n")
            self.stream.flush()


def _prepare_report() -> None:
    """The report's imports (matplotlib, numpy, pandas: about 1 s of CPU), while the JVM starts."""
    from . import plots  # noqa: F401


def read_results(spark: Any, path: str) -> pa.Table:
    """The results the job wrote to ``path``, without the assignment column, in
    :func:`kassign.fleet.group.result_schema`'s types, sorted by (cluster, group_id) (each group's
    rows stay in the order the job wrote them: the strategies' order): read with pyarrow from a local
    path (no Spark job on the driver's cold JVM), else through Spark."""
    schema = result_schema(False)
    if _is_local_path(path):
        import pyarrow.parquet as pq

        table = pq.read_table(path.removeprefix("file://"), columns=schema.names)
    else:
        table = spark.read.parquet(path).select(*schema.names).toArrow()
    table = table.replace_schema_metadata(None).cast(schema)
    return table.sort_by([("cluster", "ascending"), ("group_id", "ascending")])


@dataclass
class FleetRun:
    results_path: str
    results: pa.Table  # without the assignment column
    strategies: tuple[str, ...]
    snapshot: str
    seconds: float
    spark_seconds: float
    report_path: str | None = None
    lag_source: str = ""
    #: With the report: the per-group plan (recommendations.csv) and the metrics for monitoring
    #: (kassign_fleet.prom, with kassign_fleet.json beside it).
    recommendations_path: str | None = None
    metrics_path: str | None = None


#: Where the job's lags come from: the Rust core computes them while it builds each group's inputs.
LAG_SOURCE = "kassign's Rust core, fleet::partition_lag (rust/src/fleet/mod.rs), kassign.lag's rules"


def run_fleet(cfg: FleetConfig, spark: Any = None, log: Any = None) -> FleetRun:
    """Run the fleet job (see the module docstring). Checks arguments before Spark starts."""

    def say(msg: str) -> None:
        if log is not None:
            log(msg)

    strategies = check_strategies(cfg.strategies)
    if cfg.churn < 0:
        raise FleetError(f"churn: expected >= 0 rounds, got {cfg.churn}")
    if cfg.class_archive not in classarchive.MODES:
        raise FleetError(f"class archive: expected one of {', '.join(classarchive.MODES)}, got {cfg.class_archive!r}")
    t_start = time.perf_counter()
    os.makedirs(cfg.out, exist_ok=True)
    snapshot = cfg.snapshot or default_fleet(cfg.out, log=say)
    if _is_local_path(snapshot):
        check_snapshot(snapshot.removeprefix("file://"))
    say(f"strategies: {', '.join(strategies)}" + (f"; churn replay: {cfg.churn} rounds" if cfg.churn else ""))
    own_spark = spark is None
    archive = classarchive.Plan(None, "")
    # while the JVM starts (one core), the driver packs a local snapshot's stream files and imports
    # what the report needs
    background = ThreadPoolExecutor(2, thread_name_prefix="kassign-fleet")
    packing = None
    if cfg.plan == "stream" and _is_local_path(snapshot):
        packing = background.submit(pack_stream_files, None, snapshot)
    if cfg.report:
        background.submit(_prepare_report)
    background.shutdown(wait=False)
    t_spark = time.perf_counter()
    if own_spark:
        archive = class_archive_plan(cfg)
        note = f"; JVM class archive {archive.path}" if archive.used else ""
        if archive.recording:
            note = "; recording the JVM class archive for later runs (this run starts slower)"
        say(f"starting Spark ({effective_master(cfg) or 'spark-submit master'}{note})")
        spark = spark_session(cfg, archive)
    sc = spark.sparkContext
    shuffle = cfg.shuffle_partitions or default_partitions(snapshot, sc.defaultParallelism)
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))
    say(f"{shuffle} shuffle partitions (tasks) for the per-group stage")
    counter = sc.accumulator(0)
    df = fleet_dataframe(
        spark,
        snapshot,
        strategies,
        churn=cfg.churn,
        with_assignment=cfg.with_assignment,
        auto_offset_reset=cfg.auto_offset_reset,
        seed=cfg.seed,
        counter=counter,
        plan=cfg.plan,
        packed=packing.result() if packing is not None else None,
    )
    results_path = os.path.join(cfg.out, "results.parquet")
    progress = _ProgressThread(spark, counter, sys.stderr) if cfg.progress else None
    if progress:
        progress.start()
    try:
        df.write.mode("overwrite").parquet(results_path)
    finally:
        if progress:
            progress.stop()
    results = read_results(spark, results_path)
    spark_seconds = time.perf_counter() - t_spark
    say(f"{results.num_rows} result rows for {counter.value} groups in {spark_seconds:.1f}s -> {results_path}")
    run = FleetRun(
        results_path=results_path,
        results=results,
        strategies=strategies,
        snapshot=snapshot,
        seconds=0.0,
        spark_seconds=spark_seconds,
        lag_source=LAG_SOURCE,
    )
    if cfg.report:
        from .export import PROM_FILE
        from .report import write_report

        run.report_path = write_report(run, cfg.out)
        run.recommendations_path = os.path.join(cfg.out, "recommendations.csv")
        run.metrics_path = os.path.join(cfg.out, PROM_FILE)
        say(f"report written {time.perf_counter() - t_spark:.1f}s after Spark start -> {run.report_path}")
    run.seconds = time.perf_counter() - t_start
    if archive.recording:
        t = time.perf_counter()
        path = classarchive.finish(archive, spark)
        if path:
            mib = os.path.getsize(path) / 2**20
            say(f"recorded the JVM class archive ({mib:.0f} MiB) in {time.perf_counter() - t:.1f}s -> {path}")
        else:
            say("the JVM wrote no class archive; a later run records it again")
    return run
