"""The fleet job's configuration (``kassign fleet``'s options as a :class:`FleetConfig`), the checks
made before Spark starts, the bundled default fleet and the default shuffle partition count.
No Spark here."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import DEFAULT_DRIVER_MEMORY
from .snapshot import table_path

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
    #: :data:`kassign.fleet.plan.PLANS`: "stream" (default) or the earlier "cogroup".
    plan: str = "stream"
    #: The driver JVM's class archive (:mod:`kassign.fleet.classarchive`): "auto" (default), "use" or
    #: "off".
    class_archive: str = "auto"
    #: The metrics export's scope (:data:`kassign.fleet.export.SCOPES`): "all" (default) or "plan".
    metrics: str = "all"


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
    if snapshot is None or not is_local_path(snapshot):
        return None
    try:
        import pyarrow.dataset as ds

        return int(ds.dataset(table_path(snapshot.removeprefix("file://"), "members"), format="parquet").count_rows())
    except Exception:  # unreadable here: Spark reports it
        return None


def is_local_path(path: str) -> bool:
    """Whether ``path`` is on the driver's filesystem (no scheme, or ``file://``)."""
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
