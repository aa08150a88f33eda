"""kassign's server-range / server-uniform predict the broker's own target assignment (issue 16).

On the Kafka 4.4 test broker (``group.version=1``: the KIP-848 consumer group protocol), consumers
with ``group.protocol=consumer`` form a group: confluent-kafka-python (librdkafka) in this process
and the Java client (tests/support/java-consumer) in a child process. After each membership change the
test waits for the group to settle, reads every member's *target assignment* back with the admin
API (ConsumerGroupDescribe, through confluent-kafka's ``describe_consumer_groups``), and compares
it with kassign's prediction made from the same members (ids, subscriptions, instance ids) and the
previous target assignment read the same way:

* ``range``: equal, as sets per member;
* ``uniform``: valid, the same multiset of member loads and the same number of partitions kept
  from the previous target; where the sets differ, kassign must equal the broker's own assignor run
  on the same input in canonical order (Java's plan depends on hash order there; the same rule as
  peers/server_diff.py).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import kassign
from peers import server_diff as S
from support.kafka_broker import GroupRun

pytestmark = pytest.mark.broker

SETTLE_TIMEOUT = 120.0


class ConfluentMember:
    """A confluent-kafka consumer with group.protocol=consumer, polled by a thread."""

    def __init__(
        self, bootstrap: str, group: str, name: str, topics: list[str], assignor: str, instance_id: str | None = None
    ) -> None:
        from confluent_kafka import Consumer

        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "group.protocol": "consumer",
            "group.remote.assignor": assignor,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 2000,
        }
        if instance_id:
            conf["group.instance.id"] = instance_id
        self.name = name
        self.topics = topics
        self.consumer = Consumer(conf)
        self.consumer.subscribe(topics)
        self._stop = threading.Event()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, name=f"confluent-{name}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self.consumer.poll(0.2)
            if msg is not None and msg.error():
                self.errors.append(str(msg.error()))
        self.consumer.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), f"{self.name} did not close"


def _parts(assignment: Any) -> list[tuple[str, int]]:
    if assignment is None:
        return []
    return sorted((tp.topic, tp.partition) for tp in assignment.topic_partitions)


def describe(admin: Any, group: str, timeout: float = 60.0) -> Any:
    """ConsumerGroupDescribe; retriable errors (the group's coordinator still loading or moving,
    right after the group's first member joined; a request timing out on a loaded machine) are
    retried until ``timeout``."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    while True:
        try:
            return admin.describe_consumer_groups([group], request_timeout=15)[group].result()
        except KafkaException as exc:
            err = exc.args[0]
            if not err.retriable() and err.name() not in (
                "NOT_COORDINATOR",
                "COORDINATOR_LOAD_IN_PROGRESS",
                "COORDINATOR_NOT_AVAILABLE",
                "_TIMED_OUT",
            ):
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def settled(
    admin: Any, group: str, clients: dict[str, list[str]], topics: dict[str, int] | None = None
) -> dict[str, dict[str, Any]] | None:
    """Member id -> {client, topics, instance, target} once every expected client is a member,
    every member has reconciled to its target and (given ``topics``) the targets cover every
    partition of the subscribed topics; None while the group is still moving. (Right after a
    topic is created, the coordinator can compute a target before its metadata image has the
    topic; it computes again once the topic appears.)"""
    from confluent_kafka import ConsumerGroupState

    d = describe(admin, group)
    if d.state != ConsumerGroupState.STABLE or len(d.members) != len(clients):
        return None
    out: dict[str, dict[str, Any]] = {}
    for m in d.members:
        if m.client_id not in clients or m.target_assignment is None:
            return None
        if _parts(m.assignment) != _parts(m.target_assignment):
            return None
        out[m.member_id] = {
            "client": m.client_id,
            "topics": clients[m.client_id],
            "instance": m.group_instance_id,
            "target": _parts(m.target_assignment),
        }
    if {v["client"] for v in out.values()} != set(clients):
        return None
    if topics is not None:
        want = {(t, p) for subs in clients.values() for t in subs if t in topics for p in range(topics[t])}
        if {tp for v in out.values() for tp in v["target"]} != want:
            return None
    return out


def wait_settled(
    admin: Any, group: str, clients: dict[str, list[str]], run: GroupRun | None, topics: dict[str, int] | None = None
) -> dict:
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last: dict | None = None
    while time.monotonic() < deadline:
        if run is not None:
            run.check_alive()
        state = settled(admin, group, clients, topics)
        if state is not None and state == last:
            return state  # the same settled state twice in a row
        last = state
        time.sleep(1.0)
    raise AssertionError(f"group {group} did not settle with clients {sorted(clients)}: {describe(admin, group)}")


def predict(strategy: str, state: dict, previous: dict[str, list], topics: dict[str, int]) -> dict:
    members = {
        mid: kassign.Member(v["topics"], owned_partitions=previous.get(mid, []), group_instance_id=v["instance"])
        for mid, v in state.items()
    }
    res = kassign.assign(strategy, members, topics)
    return {m: sorted((tp[0], tp[1]) for tp in tps) for m, tps in res.items()}


def judge(assignor: str, state: dict, previous: dict[str, list], topics: dict[str, int]) -> str:
    broker = {mid: v["target"] for mid, v in state.items()}
    step = {
        "topics": topics,
        "members": {mid: {"topics": v["topics"], "instance": v["instance"]} for mid, v in state.items()},
    }
    assert S.validity_error(step, broker) is None, ("the broker's own plan is invalid?", broker)
    prev_pairs = {m: [list(tp) for tp in v] for m, v in previous.items()}
    if assignor == "range":
        predicted = predict("server-range", state, previous, topics)
        assert predicted == broker, (predicted, broker)
        return "equal"
    predicted = predict("server-uniform", state, previous, topics)
    assert S.validity_error(step, predicted) is None
    if predicted == broker:
        return "equal"
    # Equivalent, and Java's own plan for the canonical order is kassign's.
    assert S.loads(predicted) == S.loads(broker) or not S.homogeneous(step), (predicted, broker)
    java = S.java_plans("uniform", step, prev_pairs)
    assert S.as_assignment(java["sorted"]) == predicted, (predicted, java)
    if S.homogeneous(step):
        assert S.kept(prev_pairs, predicted) == S.kept(prev_pairs, broker), (predicted, broker, previous)
    return "order-dependent"


@pytest.mark.parametrize("assignor", ["range", "uniform"])
def test_broker_target_assignment_matches_prediction(kafka_broker, java_consumer, tmp_path, assignor):
    from confluent_kafka.admin import AdminClient

    a = kafka_broker.create_topic(kafka_broker.unique_name("srv-a"), partitions=7)
    b = kafka_broker.create_topic(kafka_broker.unique_name("srv-b"), partitions=5)
    topics = {a: 7, b: 5}
    group = kafka_broker.unique_name(f"server-{assignor}")
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    run = GroupRun(kafka_broker, group, [a, b], tmp_path / "workers", max_runtime=600)
    confluent: dict[str, ConfluentMember] = {}
    clients: dict[str, list[str]] = {}
    previous: dict[str, list] = {}
    outcomes: list[str] = []

    def step(what: str) -> None:
        nonlocal previous
        state = wait_settled(admin, group, clients, run, topics)
        kind = describe(admin, group).type
        assert "CONSUMER" in str(kind).upper(), f"group type {kind}: not the consumer protocol"
        outcomes.append(f"{what}: {judge(assignor, state, previous, topics)}")
        previous = {mid: v["target"] for mid, v in state.items()}

    def join(name: str, subs: list[str], instance: str | None = None) -> None:
        clients[name] = sorted(subs)
        confluent[name] = ConfluentMember(kafka_broker.bootstrap, group, name, subs, assignor, instance)

    try:
        join("c1", [a, b])
        step("c1 joins")
        join("c2", [a, b], instance="static-2")
        step("c2 (static) joins")
        clients["j1"] = sorted([a, b])
        run.start_java(
            "j1", java_consumer, topics=[a, b], extra=("--protocol", "consumer", "--remote-assignor", assignor)
        )
        step("j1 (Java) joins")
        join("c3", [a])
        step("c3 joins on one topic (heterogeneous)")
        confluent.pop("c1").close()
        del clients["c1"]
        step("c1 leaves")
        confluent.pop("c3").close()
        del clients["c3"]
        step("c3 leaves (homogeneous again)")
        run.close("j1")
        del clients["j1"]
        step("j1 leaves")
    finally:
        for m in confluent.values():
            m.close()
        run.stop_all()
    print(f"\n{assignor}: " + "; ".join(outcomes))
    assert len(outcomes) == 7


def test_snapshot_records_each_groups_protocol(kafka_broker, java_consumer, tmp_path):
    """``kassign snapshot`` (kassign.fleet.collect.collect) records which protocol each group uses, and
    describes KIP-848 groups (ConsumerGroupDescribe) as well as classic ones (DescribeGroups)."""
    from confluent_kafka.admin import AdminClient

    from kassign.fleet.collect import collect

    t = kafka_broker.create_topic(kafka_broker.unique_name("snap"), partitions=4)
    modern = kafka_broker.unique_name("snap-consumer")
    classic = kafka_broker.unique_name("snap-classic")
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    member = ConfluentMember(kafka_broker.bootstrap, modern, "m1", [t], "range")
    run = GroupRun(kafka_broker, classic, [t], tmp_path / "workers", max_runtime=300)
    try:
        run.start_java("j1", java_consumer)
        wait_settled(admin, modern, {"m1": [t]}, None)
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:
            tables = collect(kafka_broker.bootstrap, groups=[modern, classic], progress=False)
            groups = {r["group_id"]: r for r in tables["groups"].to_pylist()}
            members = {r["group_id"]: r for r in tables["members"].to_pylist()}
            if set(members) == {modern, classic} and all(members[g]["owned_partitions"] for g in members):
                break
            assert time.monotonic() < deadline, (groups, members)
            time.sleep(1.0)
    finally:
        member.close()
        run.stop_all()
    assert groups[modern]["group_protocol"] == "consumer"
    assert groups[classic]["group_protocol"] == "classic"
    assert groups[classic]["protocol"] == "cooperative-sticky"
    m = members[modern]
    assert m["topics"] == [t] and m["client_id"] == "m1"
    assert m["owned_partitions"] == [{"topic": t, "partition": p} for p in range(4)]
    assert members[classic]["assignment_user_data"] is None
