"""Changing a live group's assignor, and static members, on the real broker (issue 19).

A team adopts kassign by restarting its consumers one at a time while the group keeps consuming
(the rolling restart of KIP-429's "upgrade to cooperative" procedure), and may have to go back.
Static members (KIP-345, ``group_instance_id``) restart without a rebalance. Each test runs a real
group of worker processes (tests/support/consumer_worker.py for kafka-python, tests/support/java-consumer for Apache
Kafka's own Java consumer) while a background producer keeps writing numbered records, and checks,
over the whole run:

* every produced record is consumed (at least once);
* no partition is owned by two live members at once (from the rebalance-listener callbacks, with a
  graceful close ending ownership when the member stops processing);
* after every restart the group is stable: one generation, every partition owned exactly once;
* the group's committed offsets end at the log end.

Rolling upgrades and downgrades (a "bounce" restarts every member in turn, each restart waiting for
the group to be stable before the next one):

* kafka-python's built-in ``range`` with Java ``range`` members -> kassign ``cooperative-sticky`` by
  two bounces (``[cooperative-sticky, range]``, then ``[cooperative-sticky]``; the Java members move to
  Java's CooperativeStickyAssignor the same way), and back by two bounces the other way. The protocol
  the broker selects is checked after every bounce: ``range`` until every member offers
  ``cooperative-sticky``, then ``cooperative-sticky``; back to ``range`` on the way down.
* kafka-python's built-in ``sticky`` with a Java ``sticky`` member -> kassign ``sticky`` (same protocol
  name and user data, another library: one bounce) and back. The group stays balanced throughout.
* Eager -> cooperative inside kassign: ``sticky`` -> ``[cooperative-sticky, sticky]`` ->
  ``[cooperative-sticky]``, balanced throughout.

In the cooperative phases, a member that runs ``cooperative-sticky`` alone never revokes a partition
it keeps across a restart of another member (only partitions that move away are revoked).

Static membership, kassign ``range`` and ``sticky`` (kafka-python static members plus a Java static
member): a static member restarted within the session timeout gets exactly its partitions back,
with no rebalance and no revocation anywhere else; a static member that does not come back is
replaced after the session timeout (not before) and nothing is lost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.kafka_broker import GroupRun, KafkaBroker, NumberedProducer, overlapping_ownership

pytestmark = pytest.mark.broker

PARTITIONS = 6  # per topic; 2 topics
BACKLOG = 1200  # records produced before the group starts
PRODUCE_RATE = 100.0  # records per second while the group changes
CONSUME_RATE = 300.0  # per member


@dataclass
class Member:
    """One member slot of a rolling restart: its current worker and how to start the next one."""

    base: str
    kind: str  # "python" or "java"
    instance: str | None = None  # group_instance_id (static)
    worker: str | None = None
    restarts: int = 0


class Rolling:
    """A group under a rolling restart, with the checks of the module docstring."""

    def __init__(
        self,
        broker: KafkaBroker,
        java_classpath: str | None,
        topics: list[str],
        work_dir: Path,
        label: str,
        session_timeout_ms: int = 6000,
    ) -> None:
        self.broker = broker
        self.java_classpath = java_classpath
        self.topics = topics
        self.parts = {(t, p) for t in topics for p in range(PARTITIONS)}
        self.run = GroupRun(
            broker,
            broker.unique_name(label),
            topics,
            work_dir,
            session_timeout_ms=session_timeout_ms,
            max_runtime=400.0,
        )
        self.members: dict[str, Member] = {}
        self.states: list[tuple[str, float, float, dict[str, frozenset]]] = []  # (label, t0, t1, stable)
        self.producer: NumberedProducer | None = None
        self.strategy_of: dict[str, str] = {}  # worker -> the strategy it was started with

    # -- membership ----------------------------------------------------------------------------
    def start(self, m: Member, strategy: str) -> None:
        """Start ``m``'s next worker with ``strategy``: python: the worker's --strategy (e.g.
        "kassign:cooperative-sticky,builtin:range"); java: Java assignor names ("cooperative-sticky,range")."""
        m.worker = m.base if m.restarts == 0 else f"{m.base}.{m.restarts}"
        m.restarts += 1
        self.strategy_of[m.worker] = strategy
        if m.kind == "java":
            assert self.java_classpath is not None
            self.run.start_java(
                m.worker, self.java_classpath, rate=CONSUME_RATE, assignors=strategy, group_instance_id=m.instance
            )
        else:
            self.run.start_python(m.worker, strategy, rate=CONSUME_RATE, group_instance_id=m.instance)

    def stable(self, label: str, t0: float, timeout: float = 120.0) -> dict[str, frozenset]:
        state = self.run.wait_stable(self.parts, timeout=timeout)
        self.states.append((label, t0, time.time(), state))
        return state

    def begin(self, members: list[Member], strategies: dict[str, str]) -> dict[str, frozenset]:
        """Produce the backlog, start the background producer, start every member, wait stable."""
        self.broker.produce_numbered(self.topics, BACKLOG)
        self.producer = NumberedProducer(self.broker, self.topics, PARTITIONS, first=BACKLOG, rate=PRODUCE_RATE)
        t0 = time.time()
        for m in members:
            self.members[m.base] = m
            self.start(m, strategies[m.kind])
        return self.stable("start", t0)

    def bounce(self, label: str, strategies: dict[str, str]) -> dict[str, frozenset]:
        """Restart every member in turn with ``strategies[kind]``; stable after each restart."""
        state: dict[str, frozenset] = {}
        for m in self.members.values():
            t0 = time.time()
            self.run.close(m.worker)
            self.start(m, strategies[m.kind])
            state = self.stable(f"{label}: restart {m.base}", t0)
        return state

    def protocol(self) -> set[str]:
        """The protocols the live kafka-python members report in their latest ticks."""
        since = time.time()
        out: set[str] = set()
        deadline = time.monotonic() + 30
        for w in self.run.live():
            if w.kind != "kafka-python":
                continue
            while (tick := w.last("tick", since)) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert tick is not None, f"{w.name} stopped ticking"
            out.add(tick.get("proto"))
        return out

    # -- the end of the run and its checks ----------------------------------------------------
    def finish(self) -> dict:
        """Stop producing, wait until everything is consumed and committed, stop the group, check."""
        assert self.producer is not None
        total = self.producer.stop()
        self.producer = None
        consumed = self.run.wait_consumed(total, timeout=120)
        committed, ends = self.wait_committed(timeout=60)
        end = time.time()
        self.run.stop_all()
        missing = set(range(total)) - consumed
        assert not missing, f"{len(missing)} of {total} records never consumed, e.g. {sorted(missing)[:10]}"
        assert sum(ends.values()) == total, (sum(ends.values()), total)
        behind = {tp: (committed.get(tp), e) for tp, e in ends.items() if committed.get(tp) != e}
        assert not behind, f"committed offsets not at the log end: {behind}"
        overlaps = overlapping_ownership(self.run.ownership_intervals(end))
        assert not overlaps, f"partitions owned by two live members at once: {overlaps[:5]}"
        assert self.run.leaders(), "no member logged running the assignment"
        return {"records": total, "restarts": sum(m.restarts for m in self.members.values()), "steps": len(self.states)}

    def wait_committed(self, timeout: float) -> tuple[dict, dict]:
        ends = self.broker.end_offsets(self.topics)
        deadline = time.monotonic() + timeout
        while True:
            committed = self.broker.committed_offsets(self.run.group)
            if all(committed.get(tp) == e for tp, e in ends.items()) or time.monotonic() > deadline:
                return committed, ends
            self.run.check_alive()
            time.sleep(0.5)

    def abort(self) -> None:
        if self.producer is not None:
            try:
                self.producer.stop(timeout=10)
            except Exception:  # the test failed already; stopping is best effort
                pass
            self.producer = None
        self.run.stop_all()


@pytest.fixture
def topics(kafka_broker):
    names = [kafka_broker.unique_name(f"roll-{c}") for c in "ab"]
    kafka_broker.create_topics(names, PARTITIONS)
    return names


def _balanced(state: dict[str, frozenset]) -> bool:
    sizes = sorted(len(p) for p in state.values())
    return sizes[-1] - sizes[0] <= 1


# ------------------------------------------------------------------------------------------------
# kafka-python built-in range (+ Java range) -> kassign cooperative-sticky, and back


def test_rolling_upgrade_builtin_range_to_kassign_cooperative_sticky_and_downgrade(
    kafka_broker, java_consumer, topics, tmp_path
):
    r = Rolling(kafka_broker, java_consumer, topics, tmp_path / "workers", "upgrade-range-coop")
    members = [Member("p1", "python"), Member("j1", "java"), Member("p2", "python")]
    try:
        r.begin(members, {"python": "builtin:range", "java": "range"})
        assert r.protocol() == {"range"}
        # Bounce 1: every member offers cooperative-sticky first and still range. While one member
        # offers only range the group stays on range; once all offer both, the broker selects
        # cooperative-sticky (members still revoke eagerly: they also run an eager assignor).
        r.bounce(
            "upgrade 1", {"python": "kassign:cooperative-sticky,builtin:range", "java": "cooperative-sticky,range"}
        )
        assert r.protocol() == {"cooperative-sticky"}
        # Bounce 2: cooperative-sticky alone.
        up = r.bounce("upgrade 2", {"python": "kassign:cooperative-sticky", "java": "cooperative-sticky"})
        assert r.protocol() == {"cooperative-sticky"} and _balanced(up)
        # Downgrade: back to offering both, then range alone (the first range-only member switches
        # the whole group back to range).
        r.bounce(
            "downgrade 1", {"python": "kassign:cooperative-sticky,builtin:range", "java": "cooperative-sticky,range"}
        )
        assert r.protocol() == {"cooperative-sticky"}
        r.bounce("downgrade 2", {"python": "builtin:range", "java": "range"})
        assert r.protocol() == {"range"}
        r.finish()
    finally:
        r.abort()
    assert _check_kept_partitions_never_revoked(r) > 0


COOPERATIVE_ONLY = {"kassign:cooperative-sticky", "cooperative-sticky"}


def _check_kept_partitions_never_revoked(r: Rolling) -> int:
    """A member running only cooperative-sticky keeps what it keeps without a revocation: across
    every restart, a partition it owned before and after was never revoked in between. Returns the
    number of (member, restart) pairs checked."""
    checked = 0
    for (_, _, _, before), (label, t0, t1, after) in zip(r.states, r.states[1:]):
        for w in set(before) & set(after):
            if r.strategy_of[w] not in COOPERATIVE_ONLY:
                continue
            kept = before[w] & after[w]
            revoked = {
                (t, p)
                for e in r.run.workers[w].events()
                if e["ev"] in ("revoked", "lost") and t0 <= e["t"] <= t1
                for t, p in e["parts"]
            }
            assert not revoked & kept, f"{label}: cooperative {w} revoked {sorted(revoked & kept)} and kept them"
            checked += 1
    return checked


# ------------------------------------------------------------------------------------------------
# kafka-python built-in sticky (+ Java sticky) -> kassign sticky, and back


def test_rolling_upgrade_builtin_sticky_to_kassign_sticky_and_downgrade(kafka_broker, java_consumer, topics, tmp_path):
    r = Rolling(kafka_broker, java_consumer, topics, tmp_path / "workers", "upgrade-sticky")
    members = [Member("p1", "python"), Member("j1", "java"), Member("p2", "python")]
    try:
        r.begin(members, {"python": "builtin:sticky", "java": "sticky"})
        # Same protocol name and user data: one bounce swaps the library.
        up = r.bounce("upgrade", {"python": "kassign:sticky", "java": "sticky"})
        assert r.protocol() == {"sticky"}
        down = r.bounce("downgrade", {"python": "builtin:sticky", "java": "sticky"})
        assert r.protocol() == {"sticky"}
        r.finish()
    finally:
        r.abort()
    for label, _, _, state in r.states:
        assert _balanced(state), f"{label}: unbalanced {sorted(len(p) for p in state.values())}"
    assert up and down


# ------------------------------------------------------------------------------------------------
# Eager -> cooperative inside kassign: sticky -> cooperative-sticky by two bounces


def test_rolling_upgrade_kassign_sticky_to_cooperative_sticky(kafka_broker, topics, tmp_path):
    r = Rolling(kafka_broker, None, topics, tmp_path / "workers", "upgrade-eager-coop")
    members = [Member("p1", "python"), Member("p2", "python"), Member("p3", "python")]
    try:
        r.begin(members, {"python": "kassign:sticky"})
        assert r.protocol() == {"sticky"}
        r.bounce("upgrade 1", {"python": "kassign:cooperative-sticky,kassign:sticky"})
        assert r.protocol() == {"cooperative-sticky"}
        r.bounce("upgrade 2", {"python": "kassign:cooperative-sticky"})
        assert r.protocol() == {"cooperative-sticky"}
        r.finish()
    finally:
        r.abort()
    for label, _, _, state in r.states:
        assert _balanced(state), f"{label}: unbalanced {sorted(len(p) for p in state.values())}"
    assert _check_kept_partitions_never_revoked(r) > 0


# ------------------------------------------------------------------------------------------------
# Static membership

STATIC_SESSION_MS = 10_000
JAVA_NAME = {"range": "range", "sticky": "sticky"}


@pytest.mark.parametrize("strategy", ["range", "sticky"])
def test_static_members_restart_without_rebalance_and_expire_after_session_timeout(
    kafka_broker, java_consumer, topics, tmp_path, strategy
):
    r = Rolling(
        kafka_broker,
        java_consumer,
        topics,
        tmp_path / "workers",
        f"static-{strategy}",
        session_timeout_ms=STATIC_SESSION_MS,
    )
    members = [
        Member("s1", "python", "inst-1"),
        Member("s2", "python", "inst-2"),
        Member("j1", "java", "inst-j"),
        Member("s3", "python", "inst-3"),
    ]
    strategies = {"python": f"kassign:{strategy}", "java": JAVA_NAME[strategy]}
    run = r.run
    try:
        before = r.begin(members, strategies)
        gen_before = {w: run.workers[w].last("tick")["gen"] for w in before}

        # 1. s2 restarts within the session timeout: same partitions, no rebalance, nobody revoked.
        s2 = r.members["s2"]
        t0 = time.time()
        run.close(s2.worker)
        r.start(s2, strategies["python"])
        after = r.stable("restart s2", t0, timeout=STATIC_SESSION_MS / 1000 + 60)
        t1 = time.time()
        assert after[s2.worker] == before["s2"], (
            f"restarted static member got {sorted(after[s2.worker])}, had {sorted(before['s2'])}"
        )
        for w in ("s1", "j1", "s3"):
            assert after[w] == before[w], f"{w} changed from {sorted(before[w])} to {sorted(after[w])}"
            moved = [
                e for e in run.workers[w].events() if e["ev"] in ("revoked", "lost", "assigned") and t0 <= e["t"] <= t1
            ]
            assert not moved, f"{w} saw {moved} while the static member restarted"
            assert run.workers[w].last("tick")["gen"] == gen_before[w], f"{w}: the group rebalanced"
        assigned = [e for e in run.workers[s2.worker].events() if e["ev"] == "assigned"]
        assert len(assigned) == 1 and {tuple(p) for p in assigned[0]["parts"]} == set(before["s2"])

        # 2. s3 is stopped and never comes back: after the session timeout (not before) the broker
        # removes it and the others take over its partitions.
        t_kill = run.kill("s3")
        replaced = r.stable("s3 gone", t_kill, timeout=STATIC_SESSION_MS / 1000 + 90)
        assert "s3" not in replaced and set().union(*replaced.values()) == r.parts
        first_change = min(
            e["t"]
            for w in replaced
            for e in run.workers[w].events()
            if e["ev"] in ("revoked", "assigned") and e["t"] > t_kill
        )
        heartbeat_s = max(STATIC_SESSION_MS // 6, 200) / 1000
        assert first_change - t_kill >= STATIC_SESSION_MS / 1000 - heartbeat_s - 0.5, (
            f"s3's partitions moved {first_change - t_kill:.1f}s after it died, before its session timed out"
        )
        if strategy == "sticky":
            for w, had in after.items():
                if w in replaced:
                    assert had <= replaced[w], f"sticky: {w} lost {sorted(had - replaced[w])} when s3 expired"
        del r.members["s3"]
        r.finish()
    finally:
        r.abort()
