"""kassign's broker plugin (``dist/kassign-broker-<version>.jar``, assignor ``kassign``; issue 27).

* ``test_differential_against_uniform``: 1,000 random group states through the group
  coordinator's own ``TargetAssignmentBuilder`` with the plugin loaded from the jar, beside the
  broker's ``uniform`` (peers/server_kassign_diff.py): always valid, equal to the Python API's
  ``server-kassign`` on the same inputs, never less balanced than ``uniform``, and keeping at least
  as many partitions where the balance is equal and both start from the same target.
* ``test_group_on_three_brokers``: Kafka 4.4 (KRaft, three brokers in racks a, b, c; the jar on the
  class path; ``group.consumer.assignors`` naming it; tests/support/kafka_plugin_cluster.py). One group of
  confluent-kafka-python and Java consumers (``group.protocol=consumer``,
  ``group.remote.assignor=kassign``, ``client.rack``) while members join, leave and are killed with
  SIGKILL: every produced record is consumed, no partition is ever in two members' current
  assignments, committed offsets end at the log end, and each stable target assignment equals
  ``kassign.assign("server-kassign", ...)`` on the same inputs (topics named by topic id).
* ``test_rack_locality_beats_uniform``: on replication-factor-1 topics, the same members get higher
  rack locality from ``kassign`` than from ``uniform``, with the same balance.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from test_broker_server_assignors import describe, wait_settled

import kassign
from peers import server_kassign_diff as D
from support.kafka_broker import GroupRun
from support.kafka_plugin_cluster import RACKS, PluginCluster

DIFF_SCENARIOS = 1000


@pytest.mark.slow  # a JVM over 1,000 group states; needs the jar (`make broker-plugin`)
def test_differential_against_uniform():
    summary = D.run(DIFF_SCENARIOS)
    fig = summary["figures"]
    print("\nserver-kassign vs uniform:", fig)
    assert not summary["failures"], summary["failures"][:3]
    assert fig["groups"] >= DIFF_SCENARIOS
    assert fig["valid"] == fig["groups"]
    assert fig["python_equal"] == fig["groups"]
    assert fig["same_start_equal_balance"] > 0 and fig["same_start_with_target"] > 0


class ConfluentMember:
    """A confluent-kafka consumer (group.protocol=consumer, group.remote.assignor) polled by a
    thread; it records the numbered values it consumed and commits after every batch."""

    def __init__(self, bootstrap: str, group: str, name: str, topics: list[str], assignor: str, rack: str) -> None:
        from confluent_kafka import Consumer

        self.name = name
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": name,
                "client.rack": rack,
                "group.protocol": "consumer",
                "group.remote.assignor": assignor,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "topic.metadata.refresh.interval.ms": 2000,
            }
        )
        self.consumer.subscribe(topics)
        self.values: set[int] = set()
        self.errors: list[str] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"confluent-{name}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            msgs = self.consumer.consume(200, 0.2)
            got = False
            for msg in msgs:
                if msg.error():
                    self.errors.append(str(msg.error()))
                    continue
                self.values.add(int(msg.value()))
                got = True
            if got:
                try:
                    self.consumer.commit(asynchronous=False)
                except Exception as exc:  # a commit racing a revocation is retried by the next batch
                    self.errors.append(f"commit: {exc}")
        self.consumer.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), f"{self.name} did not close"


class OwnershipWatch:
    """Polls ConsumerGroupDescribe and records any partition in two members' current assignments."""

    def __init__(self, admin: Any, group: str) -> None:
        self.admin = admin
        self.group = group
        self.polls = 0
        self.overlaps: list[Any] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.3):
            try:
                d = describe(self.admin, self.group, timeout=5)
            except Exception:
                continue  # the group may not exist yet
            seen: dict[tuple[str, int], str] = {}
            for m in d.members:
                for tp in m.assignment.topic_partitions if m.assignment else ():
                    key = (tp.topic, tp.partition)
                    if key in seen:
                        self.overlaps.append((key, seen[key], m.client_id))
                    seen[key] = m.client_id
            self.polls += 1

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(30)


def produce(cluster: PluginCluster, topics: dict[str, int], start: int, count: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": cluster.bootstrap, "linger.ms": 10})
    names = sorted(topics)
    for i in range(start, start + count):
        t = names[i % len(names)]
        p.produce(t, value=str(i).encode(), partition=(i // len(names)) % topics[t])
    assert p.flush(60) == 0, "records left unsent"


def log_ends(cluster: PluginCluster, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The log end offset of each partition, read by a consumer of its own (no group)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "kassign-log-ends", "enable.auto.commit": False})
    try:
        return {tp: c.get_watermark_offsets(TopicPartition(*tp), timeout=10)[1] for tp in partitions}
    finally:
        c.close()


def predict(state: dict, previous: dict[str, list], topics: dict[str, int], ids: dict[str, str], racks: dict) -> dict:
    """``server-kassign`` from Python on the inputs the broker gave the plugin."""
    names = {v: k for k, v in ids.items()}
    members = {
        mid: kassign.Member(
            [ids[t] for t in v["topics"]],
            owned_partitions=[(ids[t], p) for t, p in previous.get(mid, [])],
            rack=racks[v["client"]],
        )
        for mid, v in state.items()
    }
    partition_racks = {(ids[t], p): [RACKS[p % 3]] for t, n in topics.items() for p in range(n)}
    res = kassign.assign(
        "server-kassign", members, {ids[t]: n for t, n in topics.items()}, partition_racks=partition_racks
    )
    return {m: sorted((names[tp[0]], tp[1]) for tp in tps) for m, tps in res.items()}


def test_group_on_three_brokers(plugin_cluster, java_consumer, tmp_path):
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    cluster = plugin_cluster
    a = cluster.create_topic(cluster.unique_name("plug-a"), 6)
    b = cluster.create_topic(cluster.unique_name("plug-b"), 4)
    topics = {a: 6, b: 4}
    ids = cluster.topic_ids([a, b])
    group = cluster.unique_name("plugin-group")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    produced = 0

    def more(n: int) -> None:
        nonlocal produced
        produce(cluster, topics, produced, n)
        produced += n

    more(2000)
    run = GroupRun(cluster, group, [a, b], tmp_path / "workers", max_runtime=400)  # type: ignore[arg-type]
    racks: dict[str, str] = {}
    clients: dict[str, list[str]] = {}
    confluent: dict[str, ConfluentMember] = {}
    closed: list[ConfluentMember] = []
    previous: dict[str, list] = {}
    watch = OwnershipWatch(admin, group)
    steps: list[str] = []

    def step(what: str) -> None:
        nonlocal previous
        state = wait_settled(admin, group, clients, run, topics)
        assert "CONSUMER" in str(describe(admin, group).type).upper()
        broker = {mid: v["target"] for mid, v in state.items()}
        assert broker == predict(state, previous, topics, ids, racks), (what, broker, previous)
        steps.append(what)
        previous = broker
        more(300)

    def join(name: str, rack: str) -> None:
        clients[name] = sorted([a, b])
        racks[name] = rack
        confluent[name] = ConfluentMember(cluster.bootstrap, group, name, [a, b], "kassign", rack)

    try:
        join("c1", "a")
        step("c1 joins")
        join("c2", "b")
        step("c2 joins")
        clients["j1"] = sorted([a, b])
        racks["j1"] = "c"
        run.start_java(
            "j1", java_consumer, extra=("--protocol", "consumer", "--remote-assignor", "kassign", "--rack", "c")
        )
        step("j1 (Java) joins")
        join("c3", "a")
        step("c3 joins")
        run.kill("j1")
        del clients["j1"]
        step("j1 killed (SIGKILL)")
        closed.append(confluent.pop("c1"))
        closed[-1].close()
        del clients["c1"]
        step("c1 leaves")
        # Everything produced is consumed and committed at the log end.
        end = [(t, p) for t, n in topics.items() for p in range(n)]
        deadline = time.monotonic() + 120
        while True:
            consumed = run.consumed().union(*(m.values for m in [*confluent.values(), *closed]))
            req = ConsumerGroupTopicPartitions(group, [TopicPartition(t, p) for t, p in end])
            committed = {
                (tp.topic, tp.partition): tp.offset
                for tp in admin.list_consumer_group_offsets([req])[group].result(30).topic_partitions
            }
            ends: dict[tuple[str, int], int] = {}
            if consumed >= set(range(produced)):
                ends = log_ends(cluster, end)
                if committed == ends:
                    break
            assert time.monotonic() < deadline, (produced, len(consumed), committed, ends)
            time.sleep(1.0)
    finally:
        watch.stop()
        for m in confluent.values():
            m.close()
        run.stop_all()
    assert watch.polls > 10 and not watch.overlaps, watch.overlaps[:5]
    assert len(steps) == 6


def _rack_run(cluster: PluginCluster, assignor: str, partitions: int) -> dict[str, list[tuple[str, int]]]:
    """Three members (racks a, b, c) join a fresh group first; only then are its two topics
    created, so the first target over their partitions is computed with all three present. (A
    member that joined alone would own every partition, and kassign keeps owned partitions before
    it looks at racks: the locality would then depend on the join order.)"""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    group = cluster.unique_name(f"racks-{assignor}")
    topics = {cluster.unique_name(f"rack-{assignor}-{i}"): partitions for i in (1, 2)}
    members = {f"m{r}": r for r in RACKS}
    clients = {name: sorted(topics) for name in members}
    consumers = [ConfluentMember(cluster.bootstrap, group, n, sorted(topics), assignor, r) for n, r in members.items()]
    try:
        deadline = time.monotonic() + 60
        while {m.client_id for m in describe(admin, group).members} != set(members):
            assert time.monotonic() < deadline, f"{sorted(members)} did not all join {group}: {describe(admin, group)}"
            time.sleep(0.5)
        for name in topics:
            cluster.create_topic(name, partitions)
        state = wait_settled(admin, group, clients, None, topics)
    finally:
        for c in consumers:
            c.close()
    return {v["client"]: v["target"] for v in state.values()}


def test_rack_locality_beats_uniform(plugin_cluster):
    def locality(plan: dict[str, list[tuple[str, int]]]) -> int:
        return sum(1 for m, tps in plan.items() for _, p in tps if RACKS[p % 3] == m[1:])

    k = _rack_run(plugin_cluster, "kassign", 6)
    u = _rack_run(plugin_cluster, "uniform", 6)
    print(f"\nrack-local partitions: kassign {locality(k)}/12, uniform {locality(u)}/12")
    assert sorted(len(v) for v in k.values()) == sorted(len(v) for v in u.values()) == [4, 4, 4]
    assert locality(k) == 12
    assert locality(k) > locality(u)


@pytest.fixture(autouse=True)
def _attach_cluster_logs(request):
    yield
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed and "plugin_cluster" in request.fixturenames:
        cluster = request.getfixturevalue("plugin_cluster")
        print(cluster.server_logs())
