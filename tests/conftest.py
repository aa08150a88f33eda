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

pytest_plugins = ["kafka_broker"]

# Tests that use these fixtures need the real broker (Java, Maven, a Kafka process): they are
# marked ``broker`` wherever they live, so ``-m "not broker"`` leaves them all out.
BROKER_FIXTURES = frozenset({"kafka_broker", "numbered_topics", "java_consumer"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if BROKER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.broker)
