"""Per-group cost of the fleet job's evaluation, without Spark: the Rust core's evaluation
(``kassign.fleet.evaluate``, what the job runs) against the Python reference
(``tests/oracles/fleet_group.py``: ``evaluate_group``), on the groups of a snapshot.

    python benches/fleet_groups.py --snapshot out/fleet300/snap --groups 40 --churn 4 \
        [--reference] [--profile] [--python-inputs] [--stream]

The group tables are built with pyarrow the way the job's cogroup plan builds them (members; the
group's subscribed topics joined with partitions and committed offsets; a marker row with the
groups table's state and protocol). Prints seconds per path and the per-group mean; ``--profile``
prints a cProfile of the core path (where the remaining Python time goes).

``--stream`` times what the job's default (stream) plan runs per task instead, without Spark: the
snapshot packed into the plan's files (:func:`kassign.fleet.plan.stream_files`' packing), the rows
keyed by group sorted into one stream as Spark sorts them, cut into groups
(:func:`kassign.fleet.stream.group_tables`) and evaluated with the task's index of the files
(:func:`kassign.fleet.evaluate.evaluate_stream_group`); the timed part (and the profile) covers
cutting and evaluation. With ``--reference`` it also times the Python input building it replaced
(``tests/oracles/fleet_stream.py``: ``group_inputs``, + :func:`kassign.fleet.evaluate.evaluate_group_table`).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kassign.fleet.evaluate import evaluate_group_table, python_strategies
from kassign.fleet.group import strategy_labels
from kassign.fleet.snapshot import table_path

# the Python references are test oracles (tests/oracles/), not part of the package
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))

KEY = ["cluster", "group_id"]


def group_tables(snapshot: str, n_groups: int) -> list[tuple[str, str, pa.Table, pa.Table]]:
    members = pq.read_table(table_path(snapshot, "members"))
    groups = pq.read_table(table_path(snapshot, "groups")) if os.path.exists(table_path(snapshot, "groups")) else None
    keys = sorted(set(zip(members.column("cluster").to_pylist(), members.column("group_id").to_pylist())))
    if groups is not None:
        keys = sorted(set(keys) | set(zip(groups.column("cluster").to_pylist(), groups.column("group_id").to_pylist())))
    keys = keys[:n_groups]
    wanted = pa.array([f"{c}\x00{g}" for c, g in keys])

    def select(t: pa.Table) -> pa.Table:
        key = pc.binary_join_element_wise(t.column("cluster"), t.column("group_id"), "\x00")
        return t.filter(pc.is_in(key, value_set=wanted))

    members = select(members)
    partitions = pq.read_table(table_path(snapshot, "partitions"))
    offsets = select(pq.read_table(table_path(snapshot, "offsets")))
    idx = pc.list_parent_indices(members.column("topics"))
    topics = (
        pa.table(
            {
                "cluster": pc.take(members.column("cluster"), idx),
                "group_id": pc.take(members.column("group_id"), idx),
                "topic": pc.list_flatten(members.column("topics")),
            }
        )
        .group_by(["cluster", "group_id", "topic"])
        .aggregate([])
    )
    # list columns cannot ride through a pyarrow join: carry a row index and take them after
    plain = partitions.drop(["replica_racks"]).append_column("row", pa.array(range(partitions.num_rows), pa.int64()))
    side = topics.join(plain, ["cluster", "topic"], join_type="inner").join(
        offsets.rename_columns(["cluster", "group_id", "topic", "partition", "committed"]),
        ["cluster", "group_id", "topic", "partition"],
        join_type="left outer",
    )
    side = side.append_column("replica_racks", pc.take(partitions.column("replica_racks"), side.column("row")))
    out = []
    for c, g in keys:
        sel_m = pc.and_(pc.equal(members.column("cluster"), c), pc.equal(members.column("group_id"), g))
        sel_p = pc.and_(pc.equal(side.column("cluster"), c), pc.equal(side.column("group_id"), g))
        m = members.filter(sel_m)
        p = side.filter(sel_p).select(
            ["topic", "partition", "replica_racks", "beginning_offset", "end_offset", "committed"]
        )
        state = protocol = None
        if groups is not None:
            row = groups.filter(pc.and_(pc.equal(groups.column("cluster"), c), pc.equal(groups.column("group_id"), g)))
            if row.num_rows:
                state, protocol = row.column("state")[0].as_py(), row.column("protocol")[0].as_py()
        marker = pa.table(
            {
                "topic": pa.array([None], pa.string()),
                "partition": pa.array([None], pa.int32()),
                "replica_racks": pa.array([None], pa.list_(pa.string())),
                "beginning_offset": pa.array([None], pa.int64()),
                "end_offset": pa.array([None], pa.int64()),
                "committed": pa.array([None], pa.int64()),
            }
        )
        p = pa.concat_tables([p, marker]).append_column("state", pa.array([None] * p.num_rows + [state], pa.string()))
        p = p.append_column("protocol", pa.array([None] * (p.num_rows - 1) + [protocol], pa.string()))
        out.append((c, g, m, p))
    return out


def stream_batches(snapshot: str, n_groups: int, workdir: str) -> tuple[list[pa.RecordBatch], str, str]:
    """The stream plan's input for the first ``n_groups`` groups (by cluster, group_id): record
    batches of the sorted stream (10,000 rows each, as the job's Arrow batches) and the paths of
    the packed partitions and offsets files."""
    from kassign.fleet import stream
    from kassign.fleet.plan import MEMBER_COLUMNS, RACK_LEAVES, read_driver_table

    parts_path, offs_path = os.path.join(workdir, "parts.arrow"), os.path.join(workdir, "offsets.arrow")
    stream.write_compact_partitions(
        read_driver_table(None, snapshot, "partitions", ("cluster", "topic", *RACK_LEAVES)), parts_path
    )
    rows, keys = stream.pack_offsets(read_driver_table(None, snapshot, "offsets", ("cluster", "group_id", "topic")))
    stream.write_arrow(rows, offs_path)
    members = read_driver_table(None, snapshot, "members").select(list(MEMBER_COLUMNS))

    def kind(t: pa.Table, k: int) -> pa.Table:
        return t.append_column("kind", pa.array([k] * t.num_rows, pa.int8()))

    pieces = [kind(members, stream.KIND_MEMBER), kind(keys, stream.KIND_OFFSET)]
    if os.path.exists(table_path(snapshot, "groups")):
        groups = read_driver_table(None, snapshot, "groups").select(["cluster", "group_id", *stream.GROUP_COLUMNS])
        pieces.append(kind(groups, stream.KIND_GROUP))
    t = pa.concat_tables(pieces, promote_options="default")
    for c in stream.GROUP_COLUMNS:
        if c not in t.column_names:
            t = t.append_column(c, pa.nulls(t.num_rows, pa.string()))
    t = t.sort_by([("cluster", "ascending"), ("group_id", "ascending"), ("kind", "ascending")])
    starts = stream._run_starts(t, stream.KEY)
    if n_groups < len(starts):
        t = t.slice(0, starts[n_groups])
    return t.combine_chunks().to_batches(10_000), parts_path, offs_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--groups", type=int, default=40)
    ap.add_argument("--churn", type=int, default=4)
    ap.add_argument("--reference", action="store_true", help="also time the Python reference")
    ap.add_argument("--profile", action="store_true", help="cProfile of the core path")
    ap.add_argument(
        "--strategies", default="", help="comma-separated fleet labels (default: every label, as the job runs)"
    )
    ap.add_argument(
        "--python-inputs",
        action="store_true",
        help="derive the Python strategies' sorted ids and subscribers per topic (each round) and lag arrays "
        "(each group) in Python, as before the core passed them (Inputs ignores the core's; the core still "
        "derives them), to compare",
    )
    ap.add_argument(
        "--stream", action="store_true", help="the stream plan's per-task path (cut, build inputs, evaluate)"
    )
    args = ap.parse_args(argv)
    if args.python_inputs:
        import kassign.fleet.evaluate as evaluate_module
        from kassign.assignors._greedy import Inputs

        class PythonDerived(Inputs):
            __slots__ = ()

            def __init__(
                self, *args: Any, shared: dict[str, Any], ids: object = None, subs: object = None, **kwargs: Any
            ) -> None:
                # ids and subs derived here; the lag arrays too, kept per group in a dict of their own
                super().__init__(*args, shared=shared.setdefault("--python-inputs", {}), **kwargs)

        evaluate_module.Inputs = PythonDerived  # type: ignore[misc]
    labels = tuple(s for s in args.strategies.split(",") if s) or strategy_labels()
    if args.stream:
        return stream_main(args, labels)
    t0 = time.perf_counter()
    groups = group_tables(args.snapshot, args.groups)
    rows = sum(m.num_rows for _, _, m, _ in groups)
    parts = sum(p.num_rows for _, _, _, p in groups)
    print(
        f"{len(groups)} groups, {rows} member rows, {parts} partition-side rows (tables built in "
        f"{time.perf_counter() - t0:.1f}s); {len(labels)} strategies, churn {args.churn}; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )

    tables: list[pa.Table] = []

    def core() -> None:
        prepared = python_strategies(labels)  # once, as the job's tasks do
        for c, g, m, p in groups:
            tables.append(evaluate_group_table(c, g, m, p, labels, churn_rounds=args.churn, prepared=prepared))

    t0, c0 = time.perf_counter(), time.process_time()
    if args.profile:
        prof = cProfile.Profile(time.process_time)  # CPU time: the machine may be shared
        prof.runcall(core)
    else:
        core()
    t_core, c_core = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"core:      {t_core:8.2f}s wall, {c_core:.2f}s CPU  ({t_core / len(groups) * 1000:.1f} ms/group wall, "
        f"{c_core / len(groups) * 1000:.1f} ms/group CPU)"
    )
    _per_strategy(tables, len(groups))
    if args.reference:
        from oracles.fleet_group import evaluate_group

        t0 = time.perf_counter()
        for c, g, m, p in groups:
            evaluate_group(c, g, m, p, labels, churn_rounds=args.churn)
        t_ref = time.perf_counter() - t0
        print(
            f"reference: {t_ref:8.2f}s  ({t_ref / len(groups) * 1000:.1f} ms/group); "
            f"core is {t_ref / t_core:.1f}x faster"
        )
    if args.profile:
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    return 0


def stream_main(args: argparse.Namespace, labels: tuple[str, ...]) -> int:
    import tempfile

    from kassign.fleet.evaluate import evaluate_stream_group
    from kassign.fleet.stream import group_tables, partition_index, stream_index
    from oracles.fleet_stream import group_inputs

    with tempfile.TemporaryDirectory(prefix="kassign-bench-") as d:
        t0 = time.perf_counter()
        batches, parts_path, offs_path = stream_batches(args.snapshot, args.groups, d)
        print(
            f"stream plan: {sum(b.num_rows for b in batches)} stream rows (built in {time.perf_counter() - t0:.1f}s); "
            f"{len(labels)} strategies, churn {args.churn}; "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        tables: list[pa.Table] = []

        def task() -> None:  # what a task of the job runs
            index = stream_index(parts_path, offs_path)
            prepared = python_strategies(labels)
            for group in group_tables(batches):
                tables.append(evaluate_stream_group(group, index, labels, churn_rounds=args.churn, prepared=prepared))

        def reference() -> None:  # the Python input building it replaced
            index = partition_index(parts_path, offs_path)
            prepared = python_strategies(labels)
            for group in group_tables(batches):
                c, g, m, p = group_inputs(group, index)
                evaluate_group_table(c, g, m, p, labels, churn_rounds=args.churn, prepared=prepared)

        t0, c0 = time.perf_counter(), time.process_time()
        if args.profile:
            prof = cProfile.Profile(time.process_time)
            prof.runcall(task)
        else:
            task()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        n = len(tables)
        print(
            f"{n} groups: {wall:.2f}s wall, {cpu:.2f}s CPU ({cpu / n * 1000:.2f} ms/group CPU); load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        _per_strategy(tables, n)
        if args.reference:
            t0, c0 = time.perf_counter(), time.process_time()
            reference()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            print(
                f"reference (group_inputs + evaluate_group_table): {wall:.2f}s wall, {cpu:.2f}s CPU "
                f"({cpu / n * 1000:.2f} ms/group CPU); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
            )
        if args.profile:
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


def _per_strategy(tables: list[pa.Table], n: int) -> None:
    res = pa.concat_tables(tables)
    spent = pc.add(pc.fill_null(res.column("time_ms"), 0.0), pc.fill_null(res.column("churn_time_ms"), 0.0))
    by = pa.table({"strategy": res.column("strategy"), "ms": spent}).group_by("strategy").aggregate([("ms", "sum")])
    spent_by = zip(by.column("strategy").to_pylist(), by.column("ms_sum").to_pylist())
    for name, ms in sorted(spent_by, key=lambda x: -x[1]):
        print(f"  {name:22s} {ms / n:7.2f} ms/group (assign + churn rounds, time_ms columns)")


if __name__ == "__main__":
    sys.exit(main())
