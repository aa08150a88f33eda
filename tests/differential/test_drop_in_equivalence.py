"""The drop-in classes' leader step (read, assign and encode in the Rust core) against the Python
path it replaced (``tests/support/drop_in_oracle.py``), on random groups, for every strategy and both
clients: what ``assign(cluster, members)`` sends (the SyncGroup bytes, member by member, in
order), the errors it raises and the log lines it writes.

Members are what each client's leader hands an assignor: subscriptions written by kassign's member
side (history, racks, priorities, aiokafka's embedded owned list) or by hand (every subscription
version, junk or valid user data of every kind, owned fields that disagree with the user data),
then decoded by the client's own decoder. kafka-python members may repeat an id or be static.
"""

from __future__ import annotations

import logging
import random
from typing import Any

import pytest
from aiokafka.coordinator.protocol import ConsumerProtocol
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

import kassign.aiokafka as kaio
import kassign.kafka_python as kp
from kassign import protocol
from kassign._adapter_common import ConsumerState, encode_member_metadata
from support import drop_in_oracle

TOPICS = ("t0", "t1", "t2", "t3")
CLASSES = {
    "range": "RangeAssignor",
    "roundrobin": "RoundRobinAssignor",
    "sticky": "StickyAssignor",
    "cooperative-sticky": "CooperativeStickyAssignor",
    "lag-aware": "LagAwareAssignor",
    "fair": "FairAssignor",
    "failover": "FailoverAssignor",
}


class _Broker:
    def __init__(self, rack: str | None) -> None:
        self.rack = rack


class _PartitionMeta:
    def __init__(self, replicas: list[int]) -> None:
        self.replicas = replicas


class Cluster:
    """The part of the clients' ClusterMetadata the classes read: partition ids (maybe missing or
    not contiguous) and replica racks."""

    def __init__(self, rng: random.Random) -> None:
        self.parts: dict[str, set[int] | None] = {}
        for t in TOPICS:
            roll = rng.random()
            if roll < 0.1:
                self.parts[t] = None
            elif roll < 0.15:
                self.parts[t] = {0, 2, 3}
            else:
                self.parts[t] = set(range(rng.randrange(0, 7)))
        self.brokers = {b: _Broker(rng.choice([None, "r0", "r1", "r2"])) for b in range(4)}
        self._partitions = {
            t: {p: _PartitionMeta(rng.sample(range(4), rng.randrange(0, 3))) for p in ps}
            for t, ps in self.parts.items()
            if ps
        }

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self.parts.get(topic)

    def broker_metadata(self, node: int) -> _Broker:
        return self.brokers[node]


class Lags:
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def lags(self, partitions: Any) -> dict[Any, int]:
        return {tp: (hash((self.seed, tuple(tp))) % 50) for tp in partitions}


def _junk(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))


def _owned(rng: random.Random) -> list[tuple[str, int]]:
    return [(rng.choice(TOPICS + ("gone",)), rng.randrange(-1, 8)) for _ in range(rng.randrange(0, 5))]


def _user_data(rng: random.Random, generation: int) -> bytes | None:
    kind = rng.randrange(7)
    if kind == 0:
        return None
    if kind == 1:
        return b""
    if kind == 2:
        return _junk(rng)
    if kind == 3:
        return protocol.encode_sticky_user_data(_owned(rng), rng.choice([None, generation, rng.randrange(-3, 9)]))
    if kind == 4:
        return protocol.encode_generation(rng.randrange(-2, 9)) + protocol.encode_sticky_user_data(_owned(rng))
    if kind == 5:
        return protocol.encode_generation(rng.randrange(-2, 9)) + _junk(rng)
    return protocol.encode_priority(rng.randrange(-(2**31), 2**31))


def _subscription(rng: random.Random, strategy: str, client: str) -> bytes:
    topics = rng.sample(TOPICS, rng.randrange(0, 4)) + (["absent"] if rng.random() < 0.1 else [])
    rack = rng.choice([None, None, "", "r0", "r1"])
    if rng.random() < 0.5:
        # kassign's member side, as the classes send it.
        state = ConsumerState()
        if rng.random() < 0.7:
            state.record(_owned(rng), rng.randrange(-1, 9))
        return encode_member_metadata(
            strategy,
            topics,
            state,
            rack=rack,
            priority=rng.choice([None, rng.randrange(-5, 5)]),
            embed_owned_in_user_data=client == "aiokafka" or rng.random() < 0.3,
            sticky=rng.random() < 0.5,
        )
    generation = rng.randrange(-2, 9)
    return protocol.encode_subscription(
        topics, _user_data(rng, generation), _owned(rng), generation, rack, version=rng.randrange(0, 4)
    )


def _kafka_python_members(rng: random.Random, raws: list[bytes]) -> list[Any]:
    member = JoinGroupResponse.JoinGroupResponseMember
    out = []
    for i, raw in enumerate(raws):
        mid = f"m{rng.randrange(len(raws) + 2)}" if rng.random() < 0.1 else f"m{i:02d}-{rng.randrange(100)}"
        instance = rng.choice([None, None, "", f"static-{i}"])
        out.append(member(member_id=mid, group_instance_id=instance, metadata=ConsumerProtocolSubscription.decode(raw)))
    return out


def _aiokafka_members(raws: list[bytes], rng: random.Random) -> dict[str, Any]:
    return {f"m{i:02d}-{rng.randrange(100)}": ConsumerProtocol.METADATA.decode(raw) for i, raw in enumerate(raws)}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, record.levelname, record.getMessage()))


def _outcome(call: Any, encode: Any) -> tuple[Any, list[tuple[str, str, str]]]:
    """(sent bytes {member id: bytes} in order, or the error's type and text; the log lines)."""
    handler = _Records()
    logger = logging.getLogger("kassign")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        try:
            result = call()
            sent: Any = [(mid, encode(a)) for mid, a in result.items()]
        except Exception as exc:  # compared, not hidden: both sides must raise the same
            sent = (type(exc).__name__, str(exc))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    return sent, handler.lines


def _sent(assignment: Any) -> bytes:
    """The bytes each client sends for an assignment (bytes as they are, else ``encode()``)."""
    return assignment if isinstance(assignment, bytes) else assignment.encode()


def _leader(module: Any, strategy: str, rng: random.Random) -> Any:
    cls = getattr(module, CLASSES[strategy])
    if strategy == "lag-aware":
        options: dict[str, Any] = {"sticky": rng.random() < 0.5}
        if rng.random() < 0.7:
            options["lag_provider"] = Lags(rng.randrange(1000))
        if rng.random() < 0.3:
            options["mode"] = rng.choice(["proposal", "per-topic"] + ([] if options["sticky"] else ["global"]))
        return cls(**options)
    if strategy == "failover":
        return cls(priority=rng.choice([None, 3]))
    if module is kaio and rng.random() < 0.5:
        return cls  # aiokafka configures classes
    return cls()


@pytest.mark.parametrize("strategy", list(CLASSES))
@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(0, 9))
def test_new_leader_step_sends_what_the_old_one_sent(client: str, strategy: str, seed: int, size: int) -> None:
    rng = random.Random(seed)
    cluster = Cluster(rng)
    raws = [_subscription(rng, strategy, client) for _ in range(size)]
    if client == "kafka-python":
        module, oracle = kp, drop_in_oracle.kafka_python_assign
        members: Any = _kafka_python_members(rng, raws)
    else:
        module, oracle = kaio, drop_in_oracle.aiokafka_assign
        members = _aiokafka_members(raws, rng)
    leader = _leader(module, strategy, rng)
    new = _outcome(lambda: leader.assign(cluster, members), _sent)
    old = _outcome(lambda: oracle(leader, cluster, members), _sent)
    assert new == old


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
def test_options_on_a_rust_strategy_fail_as_before(client: str) -> None:
    module, oracle = (kp, drop_in_oracle.kafka_python_assign) if client == "kafka-python" else (kaio, None)
    leader = module.RangeAssignor(mode="global")
    rng = random.Random(1)
    cluster = Cluster(rng)
    raws = [_subscription(rng, "range", client) for _ in range(3)]
    members = _kafka_python_members(rng, raws) if client == "kafka-python" else _aiokafka_members(raws, rng)
    oracle = drop_in_oracle.kafka_python_assign if client == "kafka-python" else drop_in_oracle.aiokafka_assign
    new = _outcome(lambda: leader.assign(cluster, members), _sent)
    old = _outcome(lambda: oracle(leader, cluster, members), _sent)
    assert new == old
    assert new[0][0] == "TypeError"


def test_the_oracle_can_disagree() -> None:
    """The comparison sees a difference: a member's history changes what the old path sends."""
    rng = random.Random(7)
    cluster = Cluster(rng)
    cluster.parts = {"t0": set(range(4))}
    cluster._partitions = {}
    state = ConsumerState()
    state.record([("t0", 0), ("t0", 1), ("t0", 2)], 5)
    with_history = encode_member_metadata("sticky", ["t0"], state)
    without = encode_member_metadata("sticky", ["t0"], ConsumerState())
    leader = kp.StickyAssignor()

    def sent(raws: list[bytes]) -> Any:
        members = [
            JoinGroupResponse.JoinGroupResponseMember(
                member_id=f"m{i}", group_instance_id=None, metadata=ConsumerProtocolSubscription.decode(r)
            )
            for i, r in enumerate(raws)
        ]
        return _outcome(lambda: drop_in_oracle.kafka_python_assign(leader, cluster, members), _sent)

    assert sent([without, with_history]) != sent([without, without])


def test_an_unused_owned_field_is_not_read() -> None:
    """The one difference from the old path: a sticky member whose user data carries its history
    (so the user data wins, in both paths) has its subscription's owned-partitions field left
    unread, so a malformed entry there is no longer logged. Everything sent is the same."""
    cluster = Cluster(random.Random(3))
    cluster.parts = {"t0": set(range(4))}
    cluster._partitions = {}
    state = ConsumerState()
    state.record([("t0", 0), ("t0", 1)], 5)
    raw = encode_member_metadata("sticky", ["t0"], state)

    class Junk:  # an entry with neither ``topic`` nor ``partitions``
        pass

    sub = ConsumerProtocolSubscription.decode(raw)
    assert sub.user_data  # the sticky user data, which wins over the field
    sub.owned_partitions = [Junk(), ("not", "an entry")]
    members = [
        JoinGroupResponse.JoinGroupResponseMember(member_id="m0", group_instance_id=None, metadata=sub),
        JoinGroupResponse.JoinGroupResponseMember(
            member_id="m1", group_instance_id=None, metadata=ConsumerProtocolSubscription.decode(raw)
        ),
    ]
    leader = kp.StickyAssignor()
    new_sent, new_lines = _outcome(lambda: leader.assign(cluster, members), _sent)
    old_sent, old_lines = _outcome(lambda: drop_in_oracle.kafka_python_assign(leader, cluster, members), _sent)
    assert new_sent == old_sent
    unread = [line for line in old_lines if "unreadable owned partitions entry" in line[2]]
    assert len(unread) == 2 and all("member m0" in line[2] for line in unread)
    assert new_lines == [line for line in old_lines if line not in unread]


class _Str(str):
    pass


class _Int(int):
    pass


def _odd(rng: random.Random, field: str, value: Any) -> Any:
    """An unusual but possible value for a kafka-python subscription field (or ``_UNSET``)."""
    roll = rng.randrange(8)
    if roll == 0:
        return _UNSET
    if roll == 1:
        return None
    if field == "topics":
        return rng.choice([tuple(value or ()), [_Str(t) for t in value or ()], [*(value or ()), 5], ["tö", "t\ud800"]])
    if field == "user_data":
        return rng.choice([bytearray(value or b""), memoryview(value or b""), "text", b""])
    if field == "generation_id":
        return rng.choice([True, _Int(3), 2**40, -(2**70), "3", 4])
    if field == "rack_id":
        return rng.choice([_Str("r1"), "", 5, "räck", "r\ud800", "r0"])
    entry = JoinGroupResponse.JoinGroupResponseMember  # any slotted type without topic/partitions
    return rng.choice(
        [
            tuple(value or ()),
            [entry(member_id="x", group_instance_id=None, metadata=None)],
            [_Entry(rng.choice(["t0", _Str("t1"), 3, "t\ud800"]), rng.choice(_PARTITIONS)) for _ in range(2)],
        ]
    )


_UNSET = object()
_PARTITIONS: list[Any] = [[0, 1], (2,), [True], [_Int(2)], [2**70], [-1, 3], [], None, ["1"]]


class _Entry:
    __slots__ = ("partitions", "topic")

    def __init__(self, topic: Any, partitions: Any) -> None:
        self.topic, self.partitions = topic, partitions


def _odd_group(seed: int, size: int, strategy: str, general: bool) -> tuple[Cluster, list[Any], Any]:
    rng = random.Random(seed)
    cluster = Cluster(rng)
    raws = [_subscription(rng, strategy, "kafka-python") for _ in range(size)]
    members = _kafka_python_members(rng, raws)
    for m in members:
        sub = m.metadata
        for field in ("topics", "user_data", "owned_partitions", "generation_id", "rack_id"):
            if rng.random() < 0.15:
                value = _odd(rng, field, getattr(sub, field))
                if value is _UNSET:
                    if hasattr(type(sub), field):
                        try:
                            delattr(sub, field)
                        except AttributeError:
                            pass
                else:
                    setattr(sub, field, value)
        if general and isinstance(getattr(sub, "topics", None), list):
            sub.topics = tuple(sub.topics)
    return cluster, members, _leader(kp, strategy, rng)


@pytest.mark.parametrize("strategy", list(CLASSES))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 9))
def test_the_common_case_read_equals_the_general_read(strategy: str, seed: int, size: int) -> None:
    """kafka-python members are read without Python calls when every field is a set slot of an
    exact builtin type (``rust/python/src/drop_in_fast.rs``), else the general way. A topic list given
    as a tuple takes the general way and reads the same, so the same group with its lists made
    tuples is the reference: fields made odd at random (unset slots, None, subclasses, tuples,
    bytearrays, bools, out-of-range ints, lone surrogates, entries of other types) must give the
    same bytes, errors and log lines both ways."""
    fast = _odd_group(seed, size, strategy, general=False)
    general = _odd_group(seed, size, strategy, general=True)
    new = _outcome(lambda: fast[2].assign(fast[0], fast[1]), _sent)
    old = _outcome(lambda: general[2].assign(general[0], general[1]), _sent)
    assert new == old


def _odd_aiokafka_group(seed: int, size: int, strategy: str, general: bool) -> tuple[Cluster, dict[str, Any], Any]:
    rng = random.Random(seed)
    cluster = Cluster(rng)
    raws = [_subscription(rng, strategy, "aiokafka") for _ in range(size)]
    members = _aiokafka_members(raws, rng)
    for md in members.values():
        fields = md.__dict__
        for field, odd in (
            ("subscription", lambda v: rng.choice([tuple(v or ()), [_Str(t) for t in v or ()], [*(v or ()), 5]])),
            ("user_data", lambda v: rng.choice([bytearray(v or b""), memoryview(v or b""), "text", b""])),
        ):
            roll = rng.random()
            if roll < 0.05:
                fields.pop(field, None)
            elif roll < 0.1:
                fields[field] = None
            elif roll < 0.2:
                fields[field] = odd(fields.get(field))
        if general and isinstance(fields.get("subscription"), list):
            fields["subscription"] = tuple(fields["subscription"])
    return cluster, members, _leader(kaio, strategy, rng)


@pytest.mark.parametrize("strategy", list(CLASSES))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 9))
def test_the_common_case_read_equals_the_general_read_for_aiokafka(strategy: str, seed: int, size: int) -> None:
    """aiokafka's member metadata is read from the instance dict without Python calls when both
    entries are there and of exact builtin types, else the general way: the same group with its
    subscription lists made tuples (the general way) is the reference, as for kafka-python."""
    fast = _odd_aiokafka_group(seed, size, strategy, general=False)
    general = _odd_aiokafka_group(seed, size, strategy, general=True)
    new = _outcome(lambda: fast[2].assign(fast[0], fast[1]), _sent)
    old = _outcome(lambda: general[2].assign(general[0], general[1]), _sent)
    assert new == old
