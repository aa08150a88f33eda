"""aiokafka 0.14 consumers with kassign assignors in a real group on the real broker.

* Worker processes (tests/support/consumer_worker.py --client aiokafka) with kassign's range and sticky: start 3,
  add 1, close 1 gracefully. After each step every partition has exactly one live owner; range's
  split is checked against the range rule computed here from the members' ids; sticky stays balanced
  and survivors keep everything across the leave. Every message is consumed at least once.
* Two consumers in one process configured with the same assignor class: each keeps its own state
  (owned partitions and generation equal to what its own coordinator reports).

sticky joins as soon as the Rust engine registers it in kassign.STRATEGIES (decided at collection:
without it the test does not exist; never a skip).
"""

from __future__ import annotations

import asyncio
import time

import pytest

import kassign
from support.kafka_broker import GroupRun

pytestmark = pytest.mark.broker

STRATEGIES = tuple(s for s in ("range", "sticky") if s in kassign.STRATEGIES)
PARTITIONS = 6
MESSAGES = 3000


def range_rule(member_ids: list[str], topics: list[str], partitions: int) -> dict[str, set[tuple[str, int]]]:
    """Range (docs/strategies/range.md) for members that all subscribe to ``topics``, no static members."""
    ordered = sorted(member_ids)
    n = len(ordered)
    out: dict[str, set[tuple[str, int]]] = {m: set() for m in ordered}
    for topic in topics:
        start = 0
        for k, m in enumerate(ordered):
            size = partitions // n + (1 if k < partitions % n else 0)
            out[m].update((topic, p) for p in range(start, start + size))
            start += size
    return out


@pytest.fixture(scope="module")
def small_topics(kafka_broker):
    topics = [kafka_broker.unique_name(f"aio-{c}") for c in "ab"]
    kafka_broker.create_topics(topics, PARTITIONS)
    kafka_broker.produce_numbered(topics, MESSAGES)
    return topics


def _member_ids(run: GroupRun, since: float) -> dict[str, str]:
    out = {}
    for w in run.live():
        tick = w.last("tick", since)
        out[w.name] = tick["member"]
    return out


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_aiokafka_group_with_kassign(kafka_broker, small_topics, strategy, tmp_path):
    parts = {(t, p) for t in small_topics for p in range(PARTITIONS)}
    run = GroupRun(
        kafka_broker, kafka_broker.unique_name(f"aio-{strategy}"), small_topics, tmp_path / "workers", max_runtime=240.0
    )
    states = []
    try:
        for name in ("a1", "a2", "a3"):
            run.start_python(name, strategy, client="aiokafka", rate=300.0)
        states.append(("start 3", run.wait_stable(parts), _member_ids(run, time.time() - 1)))
        run.start_python("a4", strategy, client="aiokafka", rate=300.0)
        states.append(("add 1", run.wait_stable(parts), _member_ids(run, time.time() - 1)))
        run.close("a2")
        states.append(("close a2", run.wait_stable(parts), _member_ids(run, time.time() - 1)))
        consumed = run.wait_consumed(MESSAGES, timeout=120)
    finally:
        run.stop_all()

    assert set(range(MESSAGES)) <= consumed, f"{len(set(range(MESSAGES)) - consumed)} messages never consumed"
    leaders = {w for _, w in run.leaders()}
    assert leaders, "no member logged running kassign's assignment"
    for label, owned, ids in states:
        assert set().union(*owned.values()) == parts, label
        if strategy == "range":
            expected = range_rule(list(ids.values()), small_topics, PARTITIONS)
            by_id = {ids[w]: p for w, p in owned.items()}
            assert by_id == expected, f"{label}: not the range rule"
        else:
            sizes = sorted(len(p) for p in owned.values())
            assert sizes[-1] - sizes[0] <= 1, f"{label}: unbalanced {sizes}"
    if strategy == "sticky":
        (_, before, _), (_, after, _) = states[1], states[2]
        for w, had in before.items():
            if w in after:
                assert had <= after[w], f"close a2: {w} lost {sorted(had - after[w])}"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_consumers_in_one_process_keep_separate_state(kafka_broker, small_topics, strategy):
    from aiokafka import AIOKafkaConsumer

    import kassign.aiokafka as kaio

    base = {"range": kaio.RangeAssignor, "sticky": kaio.StickyAssignor}[strategy]
    shared = type(f"Shared{base.__name__}", (base,), {})  # one class, configured on both consumers
    group = kafka_broker.unique_name(f"aio-shared-{strategy}")
    parts = {(t, p) for t in small_topics for p in range(PARTITIONS)}

    async def scenario():
        consumers = [
            AIOKafkaConsumer(
                *small_topics,
                bootstrap_servers=kafka_broker.bootstrap,
                group_id=group,
                partition_assignment_strategy=(shared,),
                session_timeout_ms=6000,
                heartbeat_interval_ms=1000,
                enable_auto_commit=False,
                metadata_max_age_ms=5000,
            )
            for _ in range(2)
        ]
        try:
            for c in consumers:
                await c.start()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await asyncio.gather(*(c.getmany(timeout_ms=200) for c in consumers))
                got = [{(tp.topic, tp.partition) for tp in c.assignment()} for c in consumers]
                gens = {c._coordinator.generation for c in consumers}
                if all(got) and not (got[0] & got[1]) and got[0] | got[1] == parts and len(gens) == 1:
                    break
            else:
                raise AssertionError(f"the two consumers did not share the partitions: {got}")
            store = kaio._store(shared)
            views = []
            for c in consumers:
                state = store.get(c._coordinator)
                views.append(
                    (
                        {(tp.topic, tp.partition) for tp in state.owned},
                        state.generation,
                        {(tp.topic, tp.partition) for tp in c.assignment()},
                        c._coordinator.generation,
                    )
                )
            return views, len(store)
        finally:
            for c in consumers:
                await c.stop()

    views, stored = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert stored == 2, "one state per consumer"
    for owned, generation, assignment, coordinator_generation in views:
        assert owned == assignment
        assert generation == coordinator_generation > 0
    assert not (views[0][0] & views[1][0])
