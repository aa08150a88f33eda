"""The Spark tests' requirements: PySpark (an optional extra) and Java 17+.

requirements-dev.txt has pyspark; a missing one (or a missing Java) is a collection error that says
what to install, never a silent skip. A test module calls :func:`require_spark` before it imports
anything that needs PySpark.
"""

import os
import shutil
import subprocess
import sys


def require_spark() -> None:
    missing = []
    try:
        import pyspark  # noqa: F401
    except ImportError:
        missing.append("pyspark (pip install 'kassign[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing.append("Java 17+")
    if missing:
        raise RuntimeError(f"the Spark tests need {' and '.join(missing)}")


def fleet_env(extra=None):
    """The environment ``kassign fleet`` runs with in the tests: this one, with this interpreter for
    the Python workers, plus ``extra``."""
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, **(extra or {})}


def fleet_cli(args, out, *, env=None, timeout=900):
    """``python -m kassign fleet ARGS --master local[2] --out OUT`` as a user runs it, in
    :func:`fleet_env` (``env``: extra environment variables)."""
    full_env = fleet_env(env)
    return subprocess.run(
        [sys.executable, "-m", "kassign", "fleet", *args, "--master", "local[2]", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
