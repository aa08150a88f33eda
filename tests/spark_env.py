"""The Spark tests' requirements: PySpark (an optional extra) and Java 17+.

Without them the Spark test modules skip on a developer's machine, but in CI (requirements-dev.txt
has pyspark, the machine has Java) a missing one is a failure, never a silent skip. A test module
calls :func:`require_spark` before it imports anything that needs PySpark.
"""

import os
import shutil

import pytest


def require_spark() -> None:
    missing = []
    try:
        import pyspark  # noqa: F401
    except ImportError:
        missing.append("pyspark (pip install 'kassign[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing.append("Java 17+")
    if missing:
        if os.environ.get("CI"):
            raise RuntimeError(f"the Spark tests need {' and '.join(missing)}")
        pytest.skip(f"the Spark tests need {' and '.join(missing)}", allow_module_level=True)
