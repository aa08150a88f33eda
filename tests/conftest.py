"""Shared pytest configuration.

Hypothesis profiles (choose with HYPOTHESIS_PROFILE): ``dev`` (default, quick), ``fast`` (10 cases
per property, what ``make test-fast`` uses), ``ci`` (what .ci/run uses), ``long`` (the >= 100k-case
reliability profile, run by ``make test-long``).

Markers (pyproject.toml): ``broker`` (set here for every test that uses the broker fixtures),
``spark``, ``slow``. ``make test-fast`` deselects all three.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("fast", max_examples=10, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=100_000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

pytest_plugins = ["support.kafka_broker", "support.kafka_plugin_cluster"]

# The Spark runs of the tests start their JVM without the class archive (kassign.fleet.classarchive),
# so that no test writes one into the user's cache and every run starts the same way;
# tests/spark/test_spark_class_archive.py sets its own.
os.environ.setdefault("KASSIGN_SPARK_CLASS_ARCHIVE", "off")

# Tests that use these fixtures need the real broker (Java, Maven, a Kafka process): they are
# marked ``broker`` wherever they live, so ``-m "not broker"`` leaves them all out.
BROKER_FIXTURES = frozenset({"kafka_broker", "numbered_topics", "java_consumer", "plugin_cluster"})


@pytest.fixture(scope="session")
def fleet_cli_run(tmp_path_factory):
    """``kassign fleet`` through its CLI in local mode (local[2]), once per test session, on a
    24-group synthetic fleet with churn and assignments: test_spark_job checks its console output
    and files, test_spark_cluster compares a standalone cluster's results with it. (Each run starts
    a JVM; sharing it keeps ``make test`` within CI's time.)"""
    from types import SimpleNamespace

    from kassign.fleet.synth import synth
    from support.spark_env import fleet_cli, fleet_env

    d = tmp_path_factory.mktemp("fleet-cli")
    snap, out = d / "snap", d / "local"
    synth(24, str(snap), seed=7)
    args = ["--snapshot", str(snap), "--churn", "2", "--assignments", "--partitions", "4"]
    proc = fleet_cli(args, out)
    return SimpleNamespace(proc=proc, snapshot=snap, out=out, groups=24, args=args, env=fleet_env())


def pytest_collection_modifyitems(config, items):
    # The 10M-partition probes run only when asked for (KASSIGN_LIMITS=1, RELIABILITY.md): they are
    # deselected, and pytest's summary counts them, rather than skipped one by one.
    if not os.environ.get("KASSIGN_LIMITS"):
        probes = [item for item in items if item.get_closest_marker("limits")]
        if probes:
            config.hook.pytest_deselected(items=probes)
            items[:] = [item for item in items if not item.get_closest_marker("limits")]
    for item in items:
        if BROKER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.broker)
