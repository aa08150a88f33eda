"""kassign.aiokafka without a broker: wire bytes (read back by a hand-written decoder and by aiokafka's
own v0 decoder), the leader's assign through aiokafka's structs, class vs instance use, and a clear
ImportError without aiokafka. The real-group behaviour is in tests/broker/test_broker_aiokafka.py."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap

import pytest

# aiokafka is pinned in requirements-dev.txt: a missing client fails here, it is never skipped.
from aiokafka.coordinator.protocol import ConsumerProtocol

import kassign
import kassign.aiokafka as kaio


# -- an independent reader of the classic ConsumerProtocol encoding (docs/wire.md) -------------------
class Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        assert self.pos + n <= len(self.data), "truncated"
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def i16(self) -> int:
        return struct.unpack(">h", self.take(2))[0]

    def i32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def nbytes(self):
        n = self.i32()
        return None if n < 0 else self.take(n)

    def topic_partitions(self) -> list[tuple[str, int]]:
        out = []
        for _ in range(self.i32()):
            topic = self.string()
            out.extend((topic, self.i32()) for _ in range(self.i32()))
        return out


def read_subscription_v3(data: bytes) -> dict:
    r = Reader(data)
    sub = {"version": r.i16(), "topics": [r.string() for _ in range(r.i32())], "user_data": r.nbytes()}
    sub["owned"] = r.topic_partitions()
    sub["generation"] = r.i32()
    sub["rack"] = r.string()
    assert r.pos == len(data), "trailing bytes"
    return sub


STRATEGY_CLASSES = {
    "range": kaio.RangeAssignor,
    "roundrobin": kaio.RoundRobinAssignor,
    "sticky": kaio.StickyAssignor,
    "cooperative-sticky": kaio.CooperativeStickyAssignor,
    "lag-aware": kaio.LagAwareAssignor,
    "fair": kaio.FairAssignor,
    "failover": kaio.FailoverAssignor,
}


def test_protocol_names_match_java():
    assert {name: cls.name for name, cls in STRATEGY_CLASSES.items()} == {n: n for n in STRATEGY_CLASSES}
    assert set(kaio.__all__) == {cls.__name__ for cls in STRATEGY_CLASSES.values()}


@pytest.mark.parametrize("name", sorted(STRATEGY_CLASSES))
def test_class_metadata_is_a_v3_subscription_that_aiokafka_reads(name):
    cls = STRATEGY_CLASSES[name]
    data = cls.metadata({"b", "a"})
    sub = read_subscription_v3(data)
    assert sub["version"] == 3
    assert sub["topics"] == ["a", "b"]
    assert sub["rack"] is None
    # aiokafka's leader decodes every member as v0: the topics and user data must read the same.
    v0 = ConsumerProtocol.METADATA.decode(data)
    assert sorted(v0.subscription) == ["a", "b"]
    assert v0.user_data == sub["user_data"]


def test_failover_priority_is_int32_big_endian_user_data():
    sub = read_subscription_v3(kaio.FailoverAssignor(priority=-2).metadata(["t"]))
    assert sub["user_data"] == b"\xff\xff\xff\xfe"
    assert read_subscription_v3(kaio.FailoverAssignor.metadata(["t"]))["user_data"] is None
    with pytest.raises(ValueError, match="priority"):
        kaio.FailoverAssignor(priority=2**31)


def test_rack_goes_into_the_subscription():
    assert read_subscription_v3(kaio.RangeAssignor(rack="r1").metadata(["t"]))["rack"] == "r1"
    with pytest.raises(TypeError, match="rack"):
        kaio.RangeAssignor(rack=3)


def test_cooperative_sticky_history_in_v3_fields_and_in_user_data():
    a = kaio.CooperativeStickyAssignor  # the class, as aiokafka users configure it
    state = a.__dict__.get("_class_states") or kaio._store(a)
    fresh = read_subscription_v3(a.metadata(["t"]))
    assert fresh["owned"] == [] and fresh["generation"] == -1
    assert fresh["user_data"][:4] == struct.pack(">i", -1)
    try:
        state.default.record([("t", 2), ("t", 0)], 7)
        sub = read_subscription_v3(a.metadata(["t"]))
    finally:
        state.default = type(state.default)()
    assert sub["owned"] == [("t", 0), ("t", 2)]
    assert sub["generation"] == 7
    # Java reads the first 4 bytes (generation); an aiokafka leader reads the owned list after them
    # (StickyAssignorUserData v0 layout: [] {topic, [] int32}).
    assert sub["user_data"][:4] == struct.pack(">i", 7)
    tail = Reader(sub["user_data"][4:])
    assert tail.topic_partitions() == [("t", 0), ("t", 2)]
    assert tail.pos == len(sub["user_data"]) - 4


class FakeCluster:
    def __init__(self, counts):
        self.counts = counts

    def partitions_for_topic(self, topic):
        n = self.counts.get(topic)
        return None if n is None else set(range(n))


def _leader_members(assignors: dict[str, object], topics: dict[str, list[str]]):
    """What aiokafka's leader hands to assign(): each member's bytes decoded with the v0 schema."""
    return {m: ConsumerProtocol.METADATA.decode(assignors[m].metadata(topics[m])) for m in assignors}


def _partitions(assignment) -> list[tuple[str, int]]:
    # The bytes aiokafka sends in SyncGroup (kassign's classes return them ready).
    encoded = assignment if isinstance(assignment, bytes) else assignment.encode()
    decoded = ConsumerProtocol.ASSIGNMENT.decode(encoded)
    return sorted((tp.topic, tp.partition) for tp in decoded.partitions())


def test_leader_range_through_aiokafka_structs():
    # Range by hand (docs/strategies/range.md): t has 5 partitions over c1, c2 -> c1 gets 0-2, c2 3-4;
    # u (3 partitions) only c2 subscribes to; "gone" has no metadata and is skipped.
    members = _leader_members(
        {"c1": kaio.RangeAssignor, "c2": kaio.RangeAssignor()}, {"c1": ["t"], "c2": ["t", "u", "gone"]}
    )
    result = kaio.RangeAssignor.assign(FakeCluster({"t": 5, "u": 3}), members)
    assert set(result) == {"c1", "c2"}
    assert _partitions(result["c1"]) == [("t", 0), ("t", 1), ("t", 2)]
    assert _partitions(result["c2"]) == [("t", 3), ("t", 4), ("u", 0), ("u", 1), ("u", 2)]
    # The bytes aiokafka sends as they are, an assignment v3.
    assert isinstance(result["c1"], bytes)
    assert ConsumerProtocol.ASSIGNMENT.decode(result["c1"]).version == 3


def test_leader_failover_reads_priorities():
    members = _leader_members(
        {"a": kaio.FailoverAssignor(priority=1), "b": kaio.FailoverAssignor(priority=9), "c": kaio.FailoverAssignor},
        {"a": ["t"], "b": ["t"], "c": ["t"]},
    )
    result = kaio.FailoverAssignor.assign(FakeCluster({"t": 4}), members)
    assert {m: len(_partitions(a)) for m, a in result.items()} == {"a": 0, "b": 4, "c": 0}


#: Decided at collection: without the sticky engine in this build the test does not exist (no skip).
STICKY_AVAILABLE = [s for s in ("sticky", "cooperative-sticky") if s in kassign.STRATEGIES]
if STICKY_AVAILABLE:

    @pytest.mark.parametrize("name", STICKY_AVAILABLE)
    def test_leader_sticky_keeps_history_read_from_v0_user_data(name):
        # Two members own t-0..t-2 and t-3..t-5; a third joins: everyone keeps what it owned up to the
        # quota of 2, nobody gains a partition someone else kept.
        cls = STRATEGY_CLASSES[name]
        owners = {"c1": [("t", p) for p in range(3)], "c2": [("t", p) for p in range(3, 6)], "c3": []}
        instances = {}
        for m, owned in owners.items():
            inst = cls()
            if owned:
                inst.state().record(owned, 4)
            instances[m] = inst
        members = _leader_members(instances, {m: ["t"] for m in owners})
        result = {m: set(_partitions(a)) for m, a in cls.assign(FakeCluster({"t": 6}), members).items()}
        assert sorted(len(p) for p in result.values()) == [2, 2, 2]
        for m, owned in owners.items():
            assert len(result[m] & set(owned)) == min(len(owned), 2), (m, result)


def test_instances_keep_separate_state_and_options():
    a, b = kaio.LagAwareAssignor(mode="global"), kaio.LagAwareAssignor()
    a.state().record([("t", 0)], 3)
    assert b.state().owned == ()
    assert a.options == {"mode": "global"} and b.options == {}
    assert "mode='global'" in repr(a)


def test_unavailable_strategy_instance_is_a_clear_import_error(monkeypatch):
    monkeypatch.setattr(kassign, "STRATEGIES", ("range",))
    with pytest.raises(ImportError, match="'fair' is not in this build"):
        kaio.FairAssignor()


def test_import_without_aiokafka_is_a_clear_import_error():
    code = textwrap.dedent("""
        import sys
        sys.modules["aiokafka"] = None
        try:
            import kassign.aiokafka
        except ImportError as exc:
            print(exc)
        else:
            print("imported")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert "pip install kassign[aiokafka]" in out, out


def test_lag_aware_sends_history_only_with_sticky():
    from kassign import protocol

    plain, sticky = kaio.LagAwareAssignor(), kaio.LagAwareAssignor(sticky=True)
    for inst in (plain, sticky):
        inst.state().record([("t", 1), ("t", 0)], 5)
    assert read_subscription_v3(plain.metadata(["t"]))["user_data"] is None
    sub = read_subscription_v3(sticky.metadata(["t"]))
    # As the sticky classes: StickyAssignorUserData v1 (owned partitions + generation), empty v3 list.
    assert protocol.decode_sticky_user_data(sub["user_data"]) == ([("t", 0), ("t", 1)], 5)
    assert sub["owned"] == [] and sub["generation"] == 5
    assert sticky.options == {"sticky": True} and "sticky=True" in repr(sticky)


def test_leader_lag_aware_sticky_keeps_owned_partitions():
    # c1 owns t-0..t-2, c2 owns t-3..t-5, c3 joins; lags equal, so keeping is free: everyone keeps
    # what it owned up to the quota of 2 and the joiner gets one from each.
    from kassign.lag import StaticLagProvider

    provider = StaticLagProvider({("t", p): 10 for p in range(6)})
    owners = {"c1": [("t", p) for p in range(3)], "c2": [("t", p) for p in range(3, 6)], "c3": []}
    instances = {}
    for m, owned in owners.items():
        inst = kaio.LagAwareAssignor(sticky=True, lag_provider=provider)
        if owned:
            inst.state().record(owned, 4)
        instances[m] = inst
    members = _leader_members(instances, {m: ["t"] for m in owners})
    leader = instances["c1"]
    result = {m: set(_partitions(a)) for m, a in leader.assign(FakeCluster({"t": 6}), members).items()}
    assert sorted(len(p) for p in result.values()) == [2, 2, 2]
    for m, owned in owners.items():
        assert len(result[m] & set(owned)) == min(len(owned), 2), (m, result)
    # The same members under a non-sticky leader: history is ignored (fresh proposal assignment).
    fresh = kaio.LagAwareAssignor(lag_provider=provider).assign(FakeCluster({"t": 6}), members)
    assert {m: _partitions(a) for m, a in fresh.items()} == {
        "c1": [("t", 0), ("t", 3)],
        "c2": [("t", 1), ("t", 4)],
        "c3": [("t", 2), ("t", 5)],
    }


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sticky": "yes"}, "sticky: expected True or False"),
        ({"mode": "nope"}, "mode: expected one of"),
        ({"min_gain": 0.2}, "min_gain: only applies with sticky=True"),
    ],
)
def test_lag_aware_bad_options_fail_at_configuration(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kaio.LagAwareAssignor(**kwargs)
