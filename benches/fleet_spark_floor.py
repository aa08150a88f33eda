"""What Spark alone costs in the fleet job: the job's plan (--plan stream: the driver-packed
partitions/offsets files, one sorted exchange, mapInArrow cutting the batches into groups and
building each group's inputs; --plan cogroup: kassign.fleet.plan.build_inputs, cogroup and
applyInArrow) and the Parquet write, with a per-group function that does nothing, and the
executors' CPU time per stage from Spark's event log.

    python benches/fleet_spark_floor.py --snapshot out/fleet-bench-10000/snap [--plan stream|cogroup] \\
        [--conf KEY=VALUE ...]

The difference between this and `kassign fleet` on the same snapshot is the per-group evaluation;
what this takes is the floor no per-group speed-up can go below. Spark runs with the job's own
settings (kassign.fleet.session.spark_session: driver memory, JVM options, shuffle partitions).
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import sys
import tempfile
import time
from typing import Any


def stage_cpu(event_dir: str) -> list[tuple[int, float, float, int, float, float]]:
    """(stage, start s, end s, tasks, executor CPU s, executor run s) from an uncompressed event log
    directory (application start = 0)."""
    paths = [p for p in glob.glob(os.path.join(event_dir, "**", "*"), recursive=True) if os.path.isfile(p)]
    logs = [p for p in paths if os.path.basename(p).startswith(("events_", "local-", "app-"))]
    if not logs:
        return []
    with open(logs[0], "rb") as f:
        raw = f.read()
    cpu: dict[int, float] = collections.Counter()
    run: dict[int, float] = collections.Counter()
    stages: dict[int, tuple[int, int, int]] = {}
    t0 = 0
    for line in raw.decode().splitlines():
        e = json.loads(line)
        ev = e["Event"]
        if ev == "SparkListenerApplicationStart":
            t0 = e["Timestamp"]
        elif ev == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            cpu[e["Stage ID"]] += m.get("Executor CPU Time", 0) / 1e9
            run[e["Stage ID"]] += m.get("Executor Run Time", 0) / 1e3
        elif ev == "SparkListenerStageCompleted":
            si = e["Stage Info"]
            stages[si["Stage ID"]] = (si.get("Submission Time", 0), si.get("Completion Time", 0), si["Number of Tasks"])
    return [(s, (a - t0) / 1000, (b - t0) / 1000, n, cpu[s], run[s]) for s, (a, b, n) in sorted(stages.items())]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--plan", choices=("stream", "cogroup"), default="stream", help="the job's plan (default: stream)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark configuration")
    args = ap.parse_args(argv)
    from pyspark.sql.pandas.types import from_arrow_schema

    from kassign.fleet.config import FleetConfig, default_partitions
    from kassign.fleet.group import result_schema
    from kassign.fleet.plan import build_inputs, sorted_stream, stream_files
    from kassign.fleet.session import spark_session

    events = tempfile.mkdtemp(prefix="kassign-events-")
    conf = dict(c.split("=", 1) for c in args.conf)
    conf.setdefault("spark.eventLog.enabled", "true")
    conf.setdefault("spark.eventLog.dir", events)
    conf.setdefault("spark.eventLog.compress", "false")
    t0 = time.perf_counter()
    spark = spark_session(FleetConfig(snapshot=args.snapshot, spark_conf=conf))
    spark.conf.set(
        "spark.sql.shuffle.partitions", str(default_partitions(args.snapshot, spark.sparkContext.defaultParallelism))
    )
    t1 = time.perf_counter()
    schema = result_schema(False)
    empty = schema.empty_table()
    out = os.path.join(tempfile.mkdtemp(prefix="kassign-floor-"), "results.parquet")
    if args.plan == "cogroup":
        members, parts = build_inputs(spark, args.snapshot)

        def nothing(key: Any, left: Any, right: Any) -> Any:
            return empty

        df = (
            members.groupBy("cluster", "group_id")
            .cogroup(parts.groupBy("cluster", "group_id"))
            .applyInArrow(nothing, schema=from_arrow_schema(schema))
        )
    else:
        t = time.perf_counter()
        files = stream_files(spark, args.snapshot)
        print(f"partitions and offsets files packed in {time.perf_counter() - t:.1f}s")

        oracles_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests")

        def split_only(batches: Any) -> Any:
            # the stream plan's own Python work (cutting batches into groups, each group's inputs)
            from pyspark import SparkFiles

            sys.path.insert(0, oracles_dir)  # the Python reference is a test oracle (tests/oracles/)
            from kassign.fleet.stream import group_tables, partition_index
            from oracles.fleet_stream import group_inputs

            index = partition_index(SparkFiles.get(files.partitions), SparkFiles.get(files.offsets))
            for group in group_tables(batches):
                group_inputs(group, index)
            yield from empty.to_batches()

        df = sorted_stream(spark, args.snapshot, files).mapInArrow(split_only, schema=from_arrow_schema(schema))
    df.write.mode("overwrite").parquet(out)
    t2 = time.perf_counter()
    spark.stop()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"plan {args.plan}: Spark start {t1 - t0:.1f}s; the job with a no-op per-group function "
        f"{t2 - t1:.1f}s; load average {load}"
    )
    rows = stage_cpu(conf["spark.eventLog.dir"])
    for s, a, b, n, c, r in rows:
        print(f"  stage {s:3d} {a:7.1f}s -> {b:7.1f}s  {n:4d} tasks  executor CPU {c:6.1f}s  run {r:6.1f}s")
    if rows:
        print(f"  executor CPU in total {sum(r[4] for r in rows):.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
