"""A mixed group on the real broker: Java consumers with Apache Kafka's own CooperativeStickyAssignor
(tests/support/java-consumer) and kafka-python consumers with kassign's, in one group, with either side as
the leader (the first member to join leads while it stays).

Steps: leader joins alone, a member of the other side joins, a third member joins, then the second
member leaves gracefully. After every step: every partition has exactly one live owner and loads
differ by at most one; on a join the existing members only give partitions away, on a leave the
survivors keep all they had; across the whole run the listener callbacks show no partition owned by
two live members at once; the group assignment was run only by the expected leader's side.

Exists only when this build has "cooperative-sticky" (decided at collection; never a skip).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import kassign
from support.kafka_broker import GroupRun, KafkaBroker, overlapping_ownership

pytestmark = pytest.mark.broker

PARTITIONS = 6
MESSAGES = 1200

#: leader side -> the members in join order, each (name, side); the second one leaves at the end.
PLANS = {
    "java-leader": [("j1", "java"), ("p1", "python"), ("j2", "java")],
    "python-leader": [("p1", "python"), ("j1", "java"), ("p2", "python")],
}


def run_mixed_group(
    broker: KafkaBroker, java_classpath: str, topics: list[str], work_dir: Path, plan: str, python_builtin: bool = False
) -> dict[str, Any]:
    """Run one plan and check it; returns what was observed (for reporting)."""
    members = PLANS[plan]
    parts = {(t, p) for t in topics for p in range(PARTITIONS)}
    run = GroupRun(broker, broker.unique_name(f"mixed-{plan}"), topics, work_dir, max_runtime=240.0)

    def start(name: str, side: str) -> None:
        if side == "java":
            run.start_java(name, java_classpath, rate=200.0)
        else:
            run.start_python(name, "cooperative-sticky", rate=200.0, builtin=python_builtin)

    steps: list[tuple[str, str, dict[str, frozenset]]] = []  # (label, kind, stable state)
    try:
        for name, side in members:
            start(name, side)
            steps.append((f"join {name}", "join", run.wait_stable(parts, timeout=120)))
        leaver = members[1][0]
        run.close(leaver)
        steps.append((f"leave {leaver}", "leave", run.wait_stable(parts, timeout=120)))
        consumed = run.wait_consumed(MESSAGES, timeout=90)
        end = time.time()
    finally:
        run.stop_all()

    assert set(range(MESSAGES)) <= consumed, f"{len(set(range(MESSAGES)) - consumed)} messages never consumed"
    prev: dict[str, frozenset] = {}
    for label, kind, state in steps:
        assert set().union(*state.values()) == parts, label
        sizes = sorted(len(p) for p in state.values())
        assert sizes[-1] - sizes[0] <= 1, f"{label}: unbalanced {sizes}"
        for w, had in prev.items():
            if kind == "join":
                assert state[w] <= had, f"{label}: {w} gained {sorted(state[w] - had)} during a join"
            elif w in state:
                assert had <= state[w], f"{label}: survivor {w} lost {sorted(had - state[w])}"
        prev = state
    overlaps = overlapping_ownership(run.ownership_intervals(end))
    assert not overlaps, f"partitions owned by two live members at once: {overlaps[:5]}"
    leader = members[0][0]
    led_by = {w for _, w in run.leaders()}
    assert led_by == {leader}, f"assignment run by {led_by}, expected only the first member {leader}"
    return {"steps": [(label, {w: len(p) for w, p in s.items()}) for label, _, s in steps], "leaders": led_by}


if "cooperative-sticky" in kassign.STRATEGIES:

    @pytest.fixture(scope="module")
    def mixed_topics(kafka_broker):
        topics = [kafka_broker.unique_name(f"mixed-{c}") for c in "ab"]
        kafka_broker.create_topics(topics, PARTITIONS)
        kafka_broker.produce_numbered(topics, MESSAGES)
        return topics

    @pytest.mark.parametrize("plan", sorted(PLANS))
    def test_mixed_java_python_cooperative_sticky_group(kafka_broker, java_consumer, mixed_topics, plan, tmp_path):
        run_mixed_group(kafka_broker, java_consumer, mixed_topics, tmp_path / "workers", plan)
