"""Record the Spark driver JVM's class archive (:mod:`kassign.fleet.classarchive`) ahead of the
first real run: ``python -m kassign.fleet.warmup`` runs the fleet job once on a small synthetic
fleet, in a temporary directory, when the archive does not exist yet, and prints its path.
``make demo`` runs it as part of its set-up. It does nothing when the archive exists or is
disabled (``KASSIGN_SPARK_CLASS_ARCHIVE=off``). It exits 0 without an archive when none can be
recorded (no ``java`` or pyspark jars found, or the JVM wrote none): the job then runs without
one. A recording run that fails exits non-zero."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from . import classarchive
from .config import FleetConfig
from .job import run_fleet
from .synth import synth

#: Groups of the small fleet the recording run evaluates (every strategy, one churn round, so
#: that every class of the job's plan is loaded).
WARMUP_GROUPS = 20


def ensure(log: Any = None) -> str | None:
    """The archive's path, recorded first if it does not exist; None when disabled, when no
    ``java`` or pyspark jars are found, or when the JVM wrote nothing."""
    path = classarchive.archive_path()
    if path is None or os.path.isfile(path):
        return path
    with tempfile.TemporaryDirectory(prefix="kassign-warmup-") as d:
        snap = os.path.join(d, "snap")
        synth(WARMUP_GROUPS, snap, seed=0)
        cfg = FleetConfig(snapshot=snap, out=os.path.join(d, "out"), churn=1, progress=False, report=False)
        run_fleet(cfg, log=log)
    return path if os.path.isfile(path) else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m kassign.fleet.warmup",
        description="Record the Spark driver JVM's class archive with a small run of the fleet job, "
        "unless it exists (kassign.fleet.classarchive); print its path.",
    )
    ap.parse_args(argv)

    def log(msg: str) -> None:
        print(f"[warmup] {msg}", file=sys.stderr, flush=True)

    if os.environ.get(classarchive.ENV, "").lower() == "off":
        print(f"class archive disabled ({classarchive.ENV}=off)")
        return 0
    path = ensure(log)
    if path is None:
        # the archive only speeds Spark's start: without it the job runs as before (a failed
        # recording run raised above, and fails the command)
        print("no class archive: no java or pyspark jars found, or the JVM wrote none", file=sys.stderr)
        return 0
    print(f"{path} ({os.path.getsize(path) / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
