"""The fleet job on PySpark (``kassign fleet``): every strategy on every consumer group of a
snapshot. This module is the orchestration; the rooms it calls:

* :mod:`kassign.fleet.config` - the job's configuration and the checks before Spark starts;
* :mod:`kassign.fleet.session` - the Spark session and the driver JVM;
* :mod:`kassign.fleet.plan` - the Spark plans (stream, cogroup) and the driver's reads;
* :mod:`kassign.fleet.report` - the HTML report, the recommendations and the exports.

:func:`run_fleet` checks the arguments, packs a local snapshot's stream files and imports the
report's libraries while the JVM starts, runs the plan with a progress line, reads the results
back and writes the report.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import classarchive
from .config import FleetConfig, FleetError, check_strategies, default_fleet, default_partitions, is_local_path
from .export import PROM_FILE, SCOPES
from .plan import fleet_dataframe, pack_stream_files, read_results
from .session import class_archive_plan, effective_master, spark_session
from .snapshot import check_snapshot

__all__ = ["LAG_SOURCE", "FleetConfig", "FleetError", "FleetRun", "run_fleet"]


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
LAG_SOURCE = (
    "kassign's Rust core, the lag rule of rust/core/src/lag.rs (lag::partition_lag), which kassign.lag also calls"
)


def run_fleet(cfg: FleetConfig, spark: Any = None, log: Any = None) -> FleetRun:
    """Run the fleet job (see the module docstring). Checks arguments before Spark starts."""

    def say(msg: str) -> None:
        if log is not None:
            log(msg)

    strategies = check_strategies(cfg.strategies)
    if cfg.churn < 0:
        raise FleetError(f"churn: expected >= 0 rounds, got {cfg.churn}")
    if cfg.metrics not in SCOPES:
        raise FleetError(f"metrics: expected one of {', '.join(SCOPES)}, got {cfg.metrics!r}")
    if cfg.class_archive not in classarchive.MODES:
        raise FleetError(f"class archive: expected one of {', '.join(classarchive.MODES)}, got {cfg.class_archive!r}")
    t_start = time.perf_counter()
    os.makedirs(cfg.out, exist_ok=True)
    snapshot = cfg.snapshot or default_fleet(cfg.out, log=say)
    if is_local_path(snapshot):
        check_snapshot(snapshot.removeprefix("file://"))
    say(f"strategies: {', '.join(strategies)}" + (f"; churn replay: {cfg.churn} rounds" if cfg.churn else ""))
    own_spark = spark is None
    archive = classarchive.Plan(None, "")
    # while the JVM starts (one core), the driver packs a local snapshot's stream files and imports
    # what the report needs
    background = ThreadPoolExecutor(2, thread_name_prefix="kassign-fleet")
    packing = None
    if cfg.plan == "stream" and is_local_path(snapshot):
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
        from .report import write_report

        run.report_path = write_report(run, cfg.out, metrics=cfg.metrics)
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
