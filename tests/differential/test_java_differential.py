"""Differential testing against Apache Kafka's Java assignors (driver: tests/support/java_diff.py,
rules and figures: docs/java_differential.md).

The default run compares 1500 seeded scenarios (about 20 s plus the first Maven build);
``KASSIGN_DIFF_SCENARIOS=10000`` (or ``make test-java-diff``) runs the full set. Java and Maven
are required: a missing tool fails the test, it is never skipped (install them with
``apt-get install openjdk-17-jdk-headless maven``; the harness's pom fetches kafka-clients).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections import Counter

import pytest

from support import java_diff as J
from support import oracles as O

# Builds the Java harness with Maven and runs 1500 scenarios through one JVM.
pytestmark = pytest.mark.slow

N = int(os.environ.get("KASSIGN_DIFF_SCENARIOS", "1500"))
SEED = int(os.environ.get("KASSIGN_DIFF_SEED", str(J.DEFAULT_SEED)))
SUMMARY_OUT = os.environ.get("KASSIGN_DIFF_JSON")


@pytest.fixture(scope="module")
def java_ready():
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None and not (tool == "mvn" and J.JAVA_JAR.exists()):
            pytest.fail(
                f"{tool!r} is not on PATH: the Java differential tests need Java 17+ and Maven "
                f"(apt-get install openjdk-17-jdk-headless maven)",
                pytrace=False,
            )
    J.build_java()


@pytest.fixture(scope="module")
def summary(java_ready):
    s = J.run(N, SEED)
    if SUMMARY_OUT:
        with open(SUMMARY_OUT, "w") as f:
            json.dump(s, f, indent=1, default=list)
    brief = {k: v for k, v in s.items() if k not in ("failures", "kassign_invalid")}
    print("\n" + json.dumps(brief, indent=1))
    return s


def _show(rows, k=3):
    return json.dumps(rows[:k], default=list)[:4000]


def test_kassign_always_valid(summary):
    """kassign's results pass validity and completeness on every scenario (cooperative: round 1
    is safe and justified, the follow-up completes it within 2 rounds), Java exceptions included."""
    assert summary["kassign_invalid"] == [], _show(summary["kassign_invalid"])


def test_range_and_roundrobin_equal_java(summary):
    for s in ("range", "roundrobin"):
        assert summary["outcomes"][s] == {"equal": summary["scenarios"]}, (
            s,
            _show([f for f in summary["failures"] if f["strategy"] == s]),
        )


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_sticky_never_worse_and_every_difference_explained(summary, strategy):
    bad = [f for f in summary["failures"] if f["strategy"] == strategy]
    assert not bad, _show(bad)
    outcomes = summary["outcomes"][strategy]
    assert "kassign-worse" not in outcomes and "unexplained" not in outcomes
    assert not any(r.startswith("unexplained") for r in summary["rules"][strategy])
    assert sum(outcomes.values()) == summary["scenarios"]
    mv = summary["moves_total"][strategy]
    assert mv["kassign"] <= mv["java"]


def test_generator_covers_the_brief(summary):
    """The scenarios exercise every feature the comparison is meant to cover (so a degenerate
    generator cannot pass vacuously), and Java's failures actually occur and are counted."""
    f = summary["features"]
    n = summary["scenarios"]
    for key in (
        "history",
        "conflict",
        "stale_generation",
        "deleted_topic",
        "out_of_range",
        "racks",
        "static",
        "duplicate_claim",
        "no_generation",
        "grown_topic",
    ):
        assert f.get(key, 0) >= max(1, n // 200), (key, f)
    assert f["heterogeneous_raw"] >= n // 4 and f["uniform_raw"] >= n // 4
    # Differences of every main class occur at this size; a run where Java and kassign never
    # differ would mean the comparison is not looking.
    sticky = summary["outcomes"]["sticky"]
    assert sticky.get("equal", 0) > 0 and sticky.get("kassign-better", 0) > 0
    assert sticky.get("java-exception", 0) + sticky.get("java-invalid", 0) > 0


def test_deterministic_generation():
    a = J.scenarios(50, SEED)
    b = J.scenarios(50, SEED)
    assert a == b
    assert a != J.scenarios(50, SEED + 1)


# --------------------------------------------------------------------------------------------
# The classifier can fail: hand-made kassign results that are worse, or different, are caught.
# --------------------------------------------------------------------------------------------

UNIFORM = {
    "topics": {"t": 4},
    "members": {
        "a": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 3},
        "b": {"topics": ["t"], "owned": [["t", 2], ["t", 3]], "generation": 3},
    },
}


def test_classifier_flags_worse_balance_and_extra_moves():
    java = {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}
    out, _rule, _ = J.classify_sticky(UNIFORM, java, java, None)
    assert out == "equal"
    worse_balance = {"a": [("t", 0), ("t", 1), ("t", 2)], "b": [("t", 3)]}
    assert J.classify_sticky(UNIFORM, worse_balance, java, None)[0] == "kassign-worse"
    more_moves = {"a": [("t", 2), ("t", 3)], "b": [("t", 0), ("t", 1)]}
    assert J.classify_sticky(UNIFORM, more_moves, java, None)[0] == "kassign-worse"


def test_classifier_rejects_unexplained_constrained_difference():
    # Same balance and moves but different sets on the constrained path with no tie rule (one
    # over-quota owner, fresh partitions dealt differently): unexplained.
    doc = {
        "topics": {"t": 4},
        "members": {
            "a": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 3},
            "b": {"topics": ["t"]},
            "c": {"topics": ["t"]},
        },
    }
    java = {"a": [("t", 0), ("t", 1)], "b": [("t", 2)], "c": [("t", 3)]}
    kas = {"a": [("t", 0), ("t", 1)], "b": [("t", 3)], "c": [("t", 2)]}
    out, rule, _ = J.classify_sticky(doc, kas, java, None)
    assert out == "unexplained", (out, rule)


def test_classifier_needs_a_rule_for_java_exceptions():
    out, rule, _ = J.classify_sticky(
        UNIFORM,
        {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]},
        None,
        "java.lang.IllegalStateException: boom at X",
    )
    assert out == "java-exception" and rule.startswith("unexplained")
    doc = copy.deepcopy(UNIFORM)
    doc["members"]["a"]["owned"].append(["t", 9])
    out, rule, _ = J.classify_sticky(
        doc, {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}, None, "java.lang.IllegalStateException: boom at X"
    )
    assert out == "java-exception" and not rule.startswith("unexplained")


def test_range_classifier_flags_difference():
    kas = {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}
    assert J.classify_exact(kas, {"assignment": {"a": [["t", 1], ["t", 0]], "b": [["t", 2], ["t", 3]]}})[0] == "equal"
    assert (
        J.classify_exact(kas, {"assignment": {"a": [["t", 0], ["t", 2]], "b": [["t", 1], ["t", 3]]}})[0]
        == "unexplained"
    )


def test_moves_measure():
    members = J._members(UNIFORM)
    resolved = O.resolve_ownership(members, UNIFORM["topics"])
    assert J.moves(resolved, {"a": [("t", 0)], "b": [("t", 1), ("t", 2), ("t", 3)]}) == 1
    # A withheld partition (cooperative round 1) counts as moved away from its owner.
    assert J.moves(resolved, {"a": [("t", 0)], "b": [("t", 2), ("t", 3)]}) == 1
    assert Counter(J.scenario_traits(UNIFORM).values())[True] == 1  # only "constrained"
