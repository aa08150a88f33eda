"""The fleet subcommands of ``kassign``: ``synth``, ``snapshot`` and ``fleet``.

Registered in :data:`kassign.cli.SUBCOMMANDS`. Heavy imports (numpy, pyarrow, pyspark, kafka)
happen only when a subcommand runs. Exit codes follow kassign.cli: 0 success, 2 bad input
(unknown strategy, bad snapshot, bad arguments; for ``snapshot`` also a bad client config, an
unreachable cluster, a refused certificate or credentials, a broker failing mid-way), 1 other
failures; errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from kassign.fleet import DEFAULT_DRIVER_MEMORY

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1


def _err(cmd: str, msg: str) -> None:
    print(f"kassign {cmd}: {msg}", file=sys.stderr)


# -- synth --------------------------------------------------------------------------------------


def _cmd_synth(args: argparse.Namespace) -> int:
    from kassign.fleet.synth import main_summary, synth

    if args.groups < 1:
        _err("synth", f"--groups: expected >= 1, got {args.groups}")
        return EXIT_BAD_INPUT
    t0 = time.perf_counter()
    stats = synth(args.groups, args.out, seed=args.seed)
    print(main_summary(stats, args.out, time.perf_counter() - t0))
    return 0


def add_synth(sub: Any) -> None:
    p = sub.add_parser("synth", help="write a seeded synthetic fleet snapshot (Parquet)")
    p.add_argument("--groups", type=int, required=True, help="number of consumer groups")
    p.add_argument("--out", required=True, help="snapshot directory to write")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=_cmd_synth)


# -- snapshot -----------------------------------------------------------------------------------


def _cmd_snapshot(args: argparse.Namespace) -> int:
    from kassign.fleet.connect import ConfigError, ConnectError, probe, settings_from

    try:
        import kafka  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError as e:
        _err("snapshot", f"needs {e.name}: pip install 'kassign[snapshot]'")
        return EXIT_FAILURE
    if args.timeout <= 0:
        _err("snapshot", f"--timeout: expected > 0 seconds, got {args.timeout}")
        return EXIT_BAD_INPUT
    try:
        settings = settings_from(args.bootstrap_servers, args.command_config, args.command_property)
    except ConfigError as e:
        _err("snapshot", str(e))
        return EXIT_BAD_INPUT
    if settings.ignored:
        _err("snapshot", "ignored properties (not used to read a snapshot): " + ", ".join(settings.ignored))
    from kafka.errors import KafkaError

    from kassign.fleet.collect import CollectError, snapshot
    from kassign.fleet.snapshot import SnapshotError

    t0 = time.perf_counter()
    try:
        probe(settings, args.timeout)
        counts = snapshot(
            settings,
            args.out,
            cluster=args.cluster,
            groups=args.group or None,
            progress=not args.quiet,
            timeout=args.timeout,
        )
    except (ConfigError, ConnectError) as e:
        _err("snapshot", settings.redact(str(e)))
        return EXIT_BAD_INPUT
    except (CollectError, SnapshotError) as e:
        _err("snapshot", f"{settings.bootstrap_servers}: {settings.redact(str(e))}")
        return EXIT_BAD_INPUT
    except KafkaError as e:
        msg = str(e)
        if not msg.startswith(type(e).__name__):
            msg = f"{type(e).__name__}: {msg}"
        _err("snapshot", f"{settings.bootstrap_servers}: {settings.redact(msg)}")
        return EXIT_BAD_INPUT
    print(f"wrote {args.out} in {time.perf_counter() - t0:.1f}s: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return 0


def add_snapshot(sub: Any) -> None:
    p = sub.add_parser(
        "snapshot",
        help="collect a fleet snapshot from a Kafka cluster (admin client)",
        description="Read every consumer group of a Kafka cluster (members, subscriptions, current "
        "assignments, committed and log offsets) into a snapshot directory for `kassign fleet`. "
        "Secured clusters (TLS, mutual TLS, SASL PLAIN/SCRAM) take the Java client's properties "
        "file, the one kafka-consumer-groups.sh --command-config reads.",
    )
    p.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT",
        help="broker list (default: bootstrap.servers from --command-config)",
    )
    p.add_argument("--out", required=True, help="snapshot directory to write")
    p.add_argument(
        "--command-config",
        metavar="FILE",
        help="Java client properties: security.protocol, sasl.mechanism, sasl.jaas.config, "
        "ssl.truststore.*, ssl.keystore.*, ssl.key.password, ssl.endpoint.identification.algorithm",
    )
    p.add_argument(
        "-X",
        "--command-property",
        action="append",
        metavar="KEY=VALUE",
        help="one client property, over the file's (repeatable), e.g. -X ssl.endpoint.identification.algorithm=",
    )
    p.add_argument("--cluster", help="cluster name in the snapshot (default: the cluster id)")
    p.add_argument("--group", action="append", help="only this group (repeatable; default: all consumer groups)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the brokers, per step (default 30)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_snapshot)


# -- fleet --------------------------------------------------------------------------------------


def _strategies(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(s.strip() for s in v.split(",") if s.strip())
    return out


def _cmd_fleet(args: argparse.Namespace) -> int:
    from kassign.fleet.config import FleetConfig, FleetError, check_strategies
    from kassign.fleet.snapshot import SnapshotError

    conf: dict[str, str] = {}
    for kv in args.conf or []:
        if "=" not in kv:
            _err("fleet", f"--conf: expected KEY=VALUE, got {kv!r}")
            return EXIT_BAD_INPUT
        k, v = kv.split("=", 1)
        conf[k] = v
    try:
        strategies = check_strategies(_strategies(args.strategies))
    except FleetError as e:
        _err("fleet", str(e))
        return EXIT_BAD_INPUT
    try:
        import pyspark  # noqa: F401
    except ImportError:
        _err("fleet", "needs PySpark: pip install 'kassign[spark]'")
        return EXIT_FAILURE
    from kassign.fleet.job import run_fleet
    from kassign.fleet.report import console_table, summarize

    cfg = FleetConfig(
        snapshot=args.snapshot,
        strategies=strategies,
        master=args.master,
        out=args.out,
        churn=args.churn,
        with_assignment=args.assignments,
        auto_offset_reset=args.auto_offset_reset,
        seed=args.seed,
        shuffle_partitions=args.partitions,
        driver_memory=args.driver_memory,
        spark_conf=conf,
        progress=not args.quiet,
        ship_kassign=args.ship_kassign,
        plan=args.plan,
        class_archive=args.class_archive,
        metrics=args.metrics,
    )

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"[fleet] {msg}", file=sys.stderr, flush=True)

    try:
        run = run_fleet(cfg, log=log)
    except (FleetError, SnapshotError) as e:
        _err("fleet", str(e))
        return EXIT_BAD_INPUT
    print(console_table(summarize(run.results, run.strategies)))
    if any(s.startswith("server-") for s in run.strategies):
        from kassign.fleet.migration import console_lines, migration_view

        print()
        print("\n".join(console_lines(migration_view(run.results.to_pandas()))))
    if run.report_path:
        import pandas as pd

        from kassign.fleet.recommend import console_lines as plan_lines

        print()
        print("\n".join(plan_lines(pd.read_csv(run.recommendations_path))))
    import pyarrow.compute as pc

    errors = run.results.filter(pc.equal(run.results.column("status"), "error"))
    n_err_groups = len(set(zip(errors.column("cluster").to_pylist(), errors.column("group_id").to_pylist())))
    print(
        f"\n{run.results.num_rows} rows ({len(run.strategies)} strategies) in {run.seconds:.1f}s; "
        f"{n_err_groups} group(s) with errors (status='error' rows)."
    )
    print(f"results: {run.results_path}")
    if run.report_path:
        print(f"report:  {run.report_path}")
        print(f"plan:    {run.recommendations_path}")
        print(f"metrics: {run.metrics_path}")
    return 0


def add_fleet(sub: Any) -> None:
    p = sub.add_parser(
        "fleet",
        help="the fleet report: every strategy on every group of a snapshot, on PySpark",
        description="Run every strategy on every consumer group of a fleet snapshot (PySpark: one "
        "exchange by (cluster, group_id) + mapInArrow) and write results.parquet, report.html with PNG "
        "plots, the per-group plan (recommendations.csv), metrics for monitoring (kassign_fleet.prom, "
        "kassign_fleet.json) and a console summary. Without --snapshot it runs on the bundled default fleet.",
    )
    p.add_argument("--snapshot", help="snapshot directory (docs/fleet.md); default: the bundled default fleet")
    p.add_argument(
        "--strategies",
        nargs="+",
        metavar="S",
        help="strategies to compare (space or comma separated; default: all this build has, plus "
        "lag-aware's other modes lag-aware:per-topic, lag-aware:global, lag-aware:sticky)",
    )
    p.add_argument("--master", help="Spark master URL (default: spark-submit's when run by it, else local[*])")
    p.add_argument("--out", default="fleet-report", help="output directory (default ./fleet-report)")
    p.add_argument(
        "--churn",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="what-if replay of ROUNDS member leave/join events per group (default 0: off)",
    )
    p.add_argument(
        "--assignments", action="store_true", help="also store each assignment in results.parquet (column 'assignment')"
    )
    p.add_argument(
        "--auto-offset-reset",
        default="latest",
        choices=["latest", "earliest"],
        help="lag of partitions without a committed offset: 0 (latest) or end - beginning",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the churn replay (default 0)")
    p.add_argument(
        "--partitions",
        type=int,
        help="Spark shuffle partitions (default 4 x cores, at least 8, and one per 20,000 member rows)",
    )
    p.add_argument(
        "--driver-memory",
        default=DEFAULT_DRIVER_MEMORY,
        help=f"spark.driver.memory when this command starts the JVM (default {DEFAULT_DRIVER_MEMORY})",
    )
    p.add_argument("--conf", action="append", metavar="KEY=VALUE", help="extra Spark configuration (repeatable)")
    p.add_argument(
        "--ship-kassign",
        action="store_true",
        help="send this kassign package (code and compiled extension) to the executors with "
        "spark.archives, for clusters whose Python has pyarrow but not kassign",
    )
    p.add_argument(
        "--plan",
        choices=["stream", "cogroup"],
        default="stream",
        help="stream (default): the driver packs the partitions and offsets tables into files sent to "
        "the executors, the members go through one sorted exchange to mapInArrow; cogroup: every "
        "table through Spark (aggregations, joins, cogroup.applyInArrow), slower, for partitions and "
        "offsets tables too big for the driver's memory",
    )
    p.add_argument(
        "--class-archive",
        choices=["auto", "use", "off"],
        default="auto",
        help="the driver JVM's class archive (faster Spark start, kassign.fleet.classarchive): auto "
        "(default) uses it, or records it during this run when it does not exist; use: never record; "
        "off: neither (also KASSIGN_SPARK_CLASS_ARCHIVE=off)",
    )
    p.add_argument(
        "--metrics",
        choices=["all", "plan"],
        default="all",
        help="what kassign_fleet.prom and kassign_fleet.json hold: every strategy of every group (all, "
        "the default), or each group's current and recommended strategy only (plan: fewer series)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=_cmd_fleet)
