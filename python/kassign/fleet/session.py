"""The fleet job's Spark session and driver JVM: quiet logging, JVM options by snapshot size, the
class archive (:mod:`kassign.fleet.classarchive`) and shipping the kassign package to executors."""

from __future__ import annotations

import os
import sys
from typing import Any

import kassign

from . import classarchive
from .config import FleetConfig, member_rows

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
#: (notes/fleet-measurements.md). ``--conf spark.driver.extraJavaOptions=...`` replaces them.
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
