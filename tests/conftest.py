"""Shared pytest configuration.

Hypothesis profiles (choose with HYPOTHESIS_PROFILE): ``dev`` (default, quick), ``ci`` (what
.ci/run uses), ``long`` (the >= 100k-case reliability profile, run by ``make test-long``).
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "long", max_examples=100_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

pytest_plugins = ["kafka_broker"]
