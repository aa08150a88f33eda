"""Reliability: bad input at every public entry point (kassign.assign, Member, the
list-based core boundary, kassign.protocol, the CLI, kassign.lag, the kafka-python adapter), a Rust
panic surfacing as an exception, one bad member never failing the leader's rebalance, the GIL during
a 1M-partition assignment, and the 10M-partition limits probe.

Tests marked ``xfail(strict=True)`` are known violations (see RELIABILITY.md): they assert the
required behaviour, fail today, and turn into a failure (XPASS) once fixed so the marker gets
removed.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Mapping

import pytest

import kassign
from kassign import Member, protocol

STRATEGIES = tuple(kassign.STRATEGIES)
M = Member(["t"])


# --------------------------------------------------------------------------------------------
# kassign.assign: wrong types, negative / huge counts, strings vs bytes; every strategy
# --------------------------------------------------------------------------------------------

ASSIGN_BAD = [
    # (id, kwargs for kassign.assign minus strategy, exception, field in the message)
    ("members-list", dict(members=[("c", M)], partitions_per_topic={"t": 1}), TypeError, "members"),
    ("members-none", dict(members=None, partitions_per_topic={"t": 1}), TypeError, "members"),
    ("member-id-int", dict(members={1: M}, partitions_per_topic={"t": 1}), TypeError, "members"),
    ("member-id-bytes", dict(members={b"c": M}, partitions_per_topic={"t": 1}), TypeError, "members"),
    ("member-not-Member", dict(members={"c": ["t"]}, partitions_per_topic={"t": 1}), TypeError, r"members\['c'\]"),
    (
        "member-dict",
        dict(members={"c": {"topics": ["t"]}}, partitions_per_topic={"t": 1}),
        TypeError,
        r"members\['c'\]",
    ),
    (
        "partitions_per_topic-list",
        dict(members={"c": M}, partitions_per_topic=[("t", 1)]),
        TypeError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-topic-bytes",
        dict(members={"c": M}, partitions_per_topic={b"t": 1}),
        TypeError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-count-str",
        dict(members={"c": M}, partitions_per_topic={"t": "3"}),
        TypeError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-count-float",
        dict(members={"c": M}, partitions_per_topic={"t": 3.0}),
        TypeError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-count-bool",
        dict(members={"c": M}, partitions_per_topic={"t": True}),
        TypeError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-count-None",
        dict(members={"c": M}, partitions_per_topic={"t": None}),
        TypeError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-negative",
        dict(members={"c": M}, partitions_per_topic={"t": -1}),
        ValueError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-int32-overflow",
        dict(members={"c": M}, partitions_per_topic={"t": 2**31}),
        ValueError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-huge",
        dict(members={"c": M}, partitions_per_topic={"t": 10**30}),
        ValueError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-total-over-limit",
        dict(members={"c": M}, partitions_per_topic={"t": 2**31 - 1}),
        ValueError,
        "partitions_per_topic",
    ),
    (
        "partitions_per_topic-sum-over-limit",
        dict(members={"c": Member(["a", "b"])}, partitions_per_topic={"a": 60_000_000, "b": 60_000_000}),
        ValueError,
        "partitions_per_topic",
    ),
    ("lags-list", dict(members={"c": M}, partitions_per_topic={"t": 1}, lags=[("t", 0, 5)]), TypeError, "lags"),
    ("lags-key-str", dict(members={"c": M}, partitions_per_topic={"t": 1}, lags={"t-0": 5}), TypeError, "lags"),
    ("lags-value-str", dict(members={"c": M}, partitions_per_topic={"t": 1}, lags={("t", 0): "5"}), TypeError, "lags"),
    ("lags-negative", dict(members={"c": M}, partitions_per_topic={"t": 1}, lags={("t", 0): -5}), ValueError, "lags"),
    (
        "racks-list",
        dict(members={"c": M}, partitions_per_topic={"t": 1}, partition_racks=[("t", 0, ["a"])]),
        TypeError,
        "partition_racks",
    ),
    (
        "racks-single-str",
        dict(members={"c": M}, partitions_per_topic={"t": 1}, partition_racks={("t", 0): "r1"}),
        TypeError,
        "partition_racks",
    ),
    (
        "racks-bytes",
        dict(members={"c": M}, partitions_per_topic={"t": 1}, partition_racks={("t", 0): [b"r1"]}),
        TypeError,
        "partition_racks",
    ),
    (
        "racks-key",
        dict(members={"c": M}, partitions_per_topic={"t": 1}, partition_racks={"t": ["r1"]}),
        TypeError,
        "partition_racks",
    ),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kwargs, exc, field", [pytest.param(*c[1:], id=c[0]) for c in ASSIGN_BAD])
def test_assign_rejects_bad_input_naming_the_field(strategy, kwargs, exc, field):
    kwargs = dict(kwargs)
    with pytest.raises(exc, match=field):
        kassign.assign(strategy, kwargs.pop("members"), kwargs.pop("partitions_per_topic"), **kwargs)


@pytest.mark.parametrize(
    "bad, exc",
    [
        (b"range", TypeError),
        (None, TypeError),
        (3, TypeError),
        ("RANGE", ValueError),
        ("", ValueError),
        ("range ", ValueError),
    ],
)
def test_assign_rejects_bad_strategy(bad, exc):
    with pytest.raises(exc, match="strategy"):
        kassign.assign(bad, {"c": M}, {"t": 1})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_assign_rejects_unknown_option(strategy):
    with pytest.raises(TypeError, match="definitely_not_an_option"):
        kassign.assign(strategy, {"c": M}, {"t": 1}, definitely_not_an_option=1)


# Fixed violation: this raised OverflowError ('Python int too large to convert to C long').
def test_assign_rack_key_beyond_int64_names_field():
    with pytest.raises((ValueError, TypeError), match="partition_racks"):
        kassign.assign("range", {"c": M}, {"t": 1}, partition_racks={("t", 2**70): ["r1"]})


@pytest.mark.parametrize("index", [-1, 2**31, 2**40])
def test_owned_partition_out_of_range_is_filtered_not_an_error(index):
    # docs/strategies/index.md: out-of-range owned indexes are odd but legal history, never an error.
    r = kassign.assign("range", {"c": Member(["t"], [("t", index)], 3)}, {"t": 2})
    assert r == {"c": [("t", 0), ("t", 1)]}


# Fixed violation: an owned index beyond int64 reached the core and raised TypeError "failed to
# extract field Members.owned" (a private column name, no member id). Member() now rejects it.
@pytest.mark.parametrize("index", [2**63, -(2**63) - 1, 2**70])
def test_owned_partition_beyond_int64_rejected_by_member(index):
    with pytest.raises(ValueError, match=r"Member\.owned_partitions"):
        Member(["t"], [("t", index)], 3)


def test_owned_partition_at_int64_edges_is_filtered():
    m = Member(["t"], [("t", 2**63 - 1), ("t", -(2**63)), ("t", 1)], 3)
    assert kassign.assign("range", {"c": m}, {"t": 2}) == {"c": [("t", 0), ("t", 1)]}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_over_the_partition_limit_is_rejected_before_any_work(strategy):
    # Fixed violation: the Python strategies (lag-aware, fair, failover) had no limit and tried to
    # build 2**31 partitions until the kernel killed the process. Time bound: nothing is built.
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="partitions_per_topic: 100000001 partitions in total exceeds the supported"):
        kassign.assign(strategy, {"c": Member(["a", "b"])}, {"a": 50_000_000, "b": 50_000_001})
    assert time.perf_counter() - t0 < 1.0
    # ... and exactly at the limit the check does not fire (a topic nobody subscribes to is not built).
    assert kassign.assign(strategy, {"c": Member(["x"])}, {"x": 1, "unsubscribed": 100_000_000 - 1}) == {
        "c": [("x", 0)]
    }


def test_one_partition_limit_for_every_strategy():
    # The limit is the Rust model's (rust/core/src/model.rs MAX_PARTITIONS), exported, not copied.
    assert kassign._MAX_PARTITIONS == kassign._core.MAX_PARTITIONS == 100_000_000
    with pytest.raises(ValueError, match="exceeds the supported maximum of 100000000"):
        kassign._core.check_partitions({"a": 60_000_000, "b": 40_000_001})
    with pytest.raises(ValueError, match="exceeds the supported maximum of 100000000"):
        kassign._core.assign(
            "range", {"c": Member(["a"])}, {"a": 60_000_000, "b": 40_000_001}, None, kassign.TopicPartition
        )


# --------------------------------------------------------------------------------------------
# kassign.Member
# --------------------------------------------------------------------------------------------

MEMBER_BAD = [
    ("topics-str", dict(topics="t"), TypeError, "Member.topics"),
    ("topics-bytes", dict(topics=b"t"), TypeError, "Member.topics"),
    ("topics-int", dict(topics=5), TypeError, "Member.topics"),
    ("topic-bytes", dict(topics=[b"t"]), TypeError, "Member.topics"),
    ("topic-None", dict(topics=[None]), TypeError, "Member.topics"),
    ("owned-str", dict(topics=["t"], owned_partitions="t-0"), TypeError, "Member.owned_partitions"),
    ("owned-int", dict(topics=["t"], owned_partitions=5), TypeError, "Member.owned_partitions"),
    ("owned-partition-str", dict(topics=["t"], owned_partitions=[("t", "0")]), TypeError, "Member.owned_partitions"),
    ("owned-partition-bool", dict(topics=["t"], owned_partitions=[("t", True)]), TypeError, "Member.owned_partitions"),
    ("owned-topic-bytes", dict(topics=["t"], owned_partitions=[(b"t", 0)]), TypeError, "Member.owned_partitions"),
    ("owned-triple", dict(topics=["t"], owned_partitions=[("t", 0, 1)]), TypeError, "Member.owned_partitions"),
    ("generation-str", dict(topics=["t"], generation="1"), TypeError, "Member.generation"),
    ("generation-float", dict(topics=["t"], generation=1.0), TypeError, "Member.generation"),
    ("generation-huge", dict(topics=["t"], generation=2**31), ValueError, "Member.generation"),
    ("generation-very-negative", dict(topics=["t"], generation=-(2**31) - 1), ValueError, "Member.generation"),
    ("rack-bytes", dict(topics=["t"], rack=b"r"), TypeError, "Member.rack"),
    ("rack-int", dict(topics=["t"], rack=1), TypeError, "Member.rack"),
    ("instance-id-bytes", dict(topics=["t"], group_instance_id=b"i"), TypeError, "Member.group_instance_id"),
    ("user-data-str", dict(topics=["t"], user_data="0000000a"), TypeError, "Member.user_data"),
    ("user-data-int", dict(topics=["t"], user_data=10), TypeError, "Member.user_data"),
    ("user-data-list", dict(topics=["t"], user_data=[0, 0, 0, 10]), TypeError, "Member.user_data"),
]


@pytest.mark.parametrize("kwargs, exc, field", [pytest.param(*c[1:], id=c[0]) for c in MEMBER_BAD])
def test_member_rejects_bad_fields(kwargs, exc, field):
    with pytest.raises(exc, match=field):
        Member(**kwargs)


def test_member_accepts_bytes_like_user_data():
    assert Member(["t"], user_data=bytearray(b"\x00\x00\x00\x01")).user_data == b"\x00\x00\x00\x01"
    assert Member(["t"], user_data=memoryview(b"\x00\x01")).user_data == b"\x00\x01"


# --------------------------------------------------------------------------------------------
# The list-based core boundary: duplicate member ids / topics cannot hide in a dict there
# --------------------------------------------------------------------------------------------


class _Pairs(Mapping):
    """A mapping whose items() may repeat keys (a dict cannot): what the core sees must still be
    checked for duplicates."""

    def __init__(self, pairs):
        self.pairs = list(pairs)

    def __getitem__(self, key):
        return dict(self.pairs)[key]

    def __iter__(self):
        return (k for k, _ in self.pairs)

    def __len__(self):
        return len(self.pairs)

    def items(self):
        return list(self.pairs)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_core_rejects_duplicate_member_ids(strategy):
    members = _Pairs([("a", Member(["t"])), ("b", Member(["t"])), ("a", Member(["t"]))])
    with pytest.raises(ValueError, match='members: duplicate member id "a"'):
        kassign.assign(strategy, members, {"t": 4})


def test_core_rejects_duplicate_topics():
    with pytest.raises(ValueError, match='partitions_per_topic: duplicate topic "t"'):
        kassign.assign("range", {"a": Member(["t"])}, _Pairs([("t", 4), ("t", 2)]))


def test_wire_path_rejects_duplicate_member_ids():
    from kassign import protocol

    sub = protocol.encode_subscription(["t"])
    with pytest.raises(ValueError, match='members: duplicate member id "a"'):
        protocol.assign_wire("range", _Pairs([("a", sub), ("a", sub)]), {"t": 4})


# --------------------------------------------------------------------------------------------
# CLI / scenario JSON: the path where duplicate member ids can actually occur
# --------------------------------------------------------------------------------------------


def _cli(stdin, strategy="range"):
    return subprocess.run(
        [sys.executable, "-m", "kassign", "assign", "--strategy", strategy, "-"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


# Fixed violation: json.loads kept the last of duplicate member ids silently and the CLI exited 0.
def test_cli_rejects_duplicate_member_ids():
    r = _cli('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"]}, "c1": {"topics": ["t"], "owned": [["t", 1]]}}}')
    assert r.returncode == 2, r.stdout
    assert "members" in r.stderr and "duplicate" in r.stderr and "c1" in r.stderr
    assert "Traceback" not in r.stderr


# Fixed violation: duplicate topic keys in scenario JSON were silently merged (last wins).
def test_cli_rejects_duplicate_topics():
    r = _cli('{"topics": {"t": 2, "t": 3}, "members": {"c1": {"topics": ["t"]}}}')
    assert r.returncode == 2, r.stdout
    assert "topics" in r.stderr and "duplicate" in r.stderr


@pytest.mark.parametrize(
    "doc, where",
    [
        ('{"topics": {}, "topics": {"t": 1}, "members": {}}', "scenario"),
        ('{"topics": {"t": 1}, "members": {"c1": {"topics": ["t"], "generation": 1, "generation": 2}}}', "members.c1"),
        (
            '{"topics": {"t": 1}, "members": {"c1": {"topics": ["t"]}}, "options": {"mode": "a", "mode": "b"}}',
            "options",
        ),
    ],
)
def test_scenario_duplicate_keys_anywhere_are_errors(doc, where):
    from kassign.scenario import ScenarioError, load_scenario

    with pytest.raises(ScenarioError, match=f"^{where}: duplicate keys"):
        load_scenario(doc)


@pytest.mark.parametrize(
    "doc, field",
    [
        (
            '{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"], "generation": 4294967296}}}',
            "members.c1.generation",
        ),
        ('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"], "generation": "1"}}}', "members.c1.generation"),
        ('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"], "rack": 5}}}', "members.c1.rack"),
        ('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"], "user_data_hex": 5}}}', "members.c1.user_data_hex"),
        ('{"topics": {"t": 2}, "members": {"c1": {"topics": [1]}}}', "members.c1.topics"),
        ('{"topics": {"t": 2.5}, "members": {}}', "topics.t"),
        ('{"topics": {"t": 99999999999}, "members": {"c1": {"topics": ["t"]}}}', "partitions_per_topic"),
        ('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"]}}, "lags": [["t", 0, -1]]}', "lags"),
        (
            '{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"]}}, "partition_racks": [["t", 0, "r"]]}',
            "partition_racks",
        ),
        ('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"]}}, "surprise": 1}', "unknown keys"),
        ('{"topics": {"t": 2}, "members": ["c1"]}', "members"),
    ],
)
def test_cli_bad_scenarios_exit_2_naming_the_field(doc, field):
    r = _cli(doc)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert field in r.stderr
    assert "Traceback" not in r.stderr


def test_scenario_parser_errors_are_value_errors():
    from kassign.scenario import ScenarioError, load_scenario

    assert issubclass(ScenarioError, ValueError)
    with pytest.raises(ScenarioError, match=r"members\.c1\.owned"):
        load_scenario('{"topics": {"t": 2}, "members": {"c1": {"topics": ["t"], "owned": [["t", "0"]]}}}')


# --------------------------------------------------------------------------------------------
# kassign.protocol: strings where bytes belong, and the reverse; out-of-range ints
# --------------------------------------------------------------------------------------------

PROTOCOL_BAD = [
    ("decode_subscription-str", lambda: protocol.decode_subscription("\x00\x03"), TypeError, None),
    ("decode_subscription-None", lambda: protocol.decode_subscription(None), TypeError, None),
    ("decode_assignment-str", lambda: protocol.decode_assignment("\x00\x03"), TypeError, None),
    ("decode_sticky-str", lambda: protocol.decode_sticky_user_data("abc"), TypeError, None),
    ("decode_generation-str", lambda: protocol.decode_generation("\x00\x00\x00\x05"), TypeError, None),
    ("decode_priority-str", lambda: protocol.decode_priority("\x00\x00\x00\x05"), TypeError, None),
    ("encode_subscription-topics-str", lambda: protocol.encode_subscription("t"), TypeError, "topics"),
    (
        "encode_subscription-user_data-str",
        lambda: protocol.encode_subscription(["t"], user_data="x"),
        TypeError,
        "user_data",
    ),
    ("encode_subscription-rack-bytes", lambda: protocol.encode_subscription(["t"], rack=b"r"), TypeError, "rack"),
    (
        "encode_subscription-generation-huge",
        lambda: protocol.encode_subscription(["t"], generation=2**31),
        ValueError,
        "generation",
    ),
    (
        "encode_subscription-version-negative",
        lambda: protocol.encode_subscription(["t"], version=-1),
        ValueError,
        "version",
    ),
    ("encode_subscription-version-str", lambda: protocol.encode_subscription(["t"], version="3"), TypeError, "version"),
    (
        "encode_subscription-owned-huge",
        lambda: protocol.encode_subscription(["t"], owned_partitions=[("t", 2**31)]),
        ValueError,
        "owned_partitions",
    ),
    (
        "encode_subscription-owned-str",
        lambda: protocol.encode_subscription(["t"], owned_partitions=[("t", "0")]),
        TypeError,
        "owned_partitions",
    ),
    ("encode_assignment-partitions-str", lambda: protocol.encode_assignment("t-0"), TypeError, "partitions"),
    (
        "encode_assignment-user_data-str",
        lambda: protocol.encode_assignment([("t", 0)], user_data="x"),
        TypeError,
        "user_data",
    ),
    (
        "encode_assignment-negative-partition-huge",
        lambda: protocol.encode_assignment([("t", -(2**31) - 1)]),
        ValueError,
        "partitions",
    ),
    (
        "encode_sticky-generation-str",
        lambda: protocol.encode_sticky_user_data([("t", 0)], "5"),
        TypeError,
        "generation",
    ),
    ("encode_generation-huge", lambda: protocol.encode_generation(2**31), ValueError, "generation"),
    ("encode_priority-str", lambda: protocol.encode_priority("5"), TypeError, "priority"),
]


@pytest.mark.parametrize("call, exc, field", [pytest.param(*c[1:], id=c[0]) for c in PROTOCOL_BAD])
def test_protocol_rejects_bad_arguments(call, exc, field):
    with pytest.raises(exc) as info:
        call()
    if field is not None:
        assert field in str(info.value)


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xff", b"\x00\x03\xff\xff\xff\xff", b"\x00\x00\x7f\xff\xff\xff"])
def test_protocol_decoders_raise_protocol_error_on_garbage(data):
    for decode in (protocol.decode_subscription, protocol.decode_assignment):
        with pytest.raises(kassign.ProtocolError):
            decode(data)


# --------------------------------------------------------------------------------------------
# kassign.lag: providers reject bad configuration naming the field
# --------------------------------------------------------------------------------------------

LAG_BAD = [
    ("static-list", lambda: kassign.lag.StaticLagProvider([("t", 0, 5)]), TypeError, "mapping"),
    ("static-key", lambda: kassign.lag.StaticLagProvider({"t-0": 5}), TypeError, "mapping"),
    ("static-value-str", lambda: kassign.lag.StaticLagProvider({("t", 0): "5"}), TypeError, "mapping"),
    ("static-negative", lambda: kassign.lag.StaticLagProvider({("t", 0): -1}), ValueError, "mapping"),
    ("kafka-group-empty", lambda: kassign.lag.KafkaLagProvider("127.0.0.1:1", ""), ValueError, "group_id"),
    ("kafka-group-bytes", lambda: kassign.lag.KafkaLagProvider("127.0.0.1:1", b"g"), ValueError, "group_id"),
    (
        "kafka-timeout-zero",
        lambda: kassign.lag.KafkaLagProvider("127.0.0.1:1", "g", timeout_s=0),
        ValueError,
        "timeout_s",
    ),
    (
        "kafka-timeout-str",
        lambda: kassign.lag.KafkaLagProvider("127.0.0.1:1", "g", timeout_s="5"),
        ValueError,
        "timeout_s",
    ),
    (
        "kafka-reset-int",
        lambda: kassign.lag.KafkaLagProvider("127.0.0.1:1", "g", auto_offset_reset=1),
        TypeError,
        "auto_offset_reset",
    ),
    ("compute-reset-None", lambda: kassign.lag.compute_lag(1, 0, 5, None), TypeError, "auto_offset_reset"),
]


@pytest.mark.parametrize("call, exc, field", [pytest.param(*c[1:], id=c[0]) for c in LAG_BAD])
def test_lag_providers_reject_bad_arguments(call, exc, field):
    import kassign.lag  # noqa: F401

    with pytest.raises(exc, match=field):
        call()


# --------------------------------------------------------------------------------------------
# A Rust panic becomes kassign.InternalError; the process survives
# --------------------------------------------------------------------------------------------
#
# Gating: ``kassign._core._trigger_panic`` is compiled into every build (debug and release), under
# a private name. It runs a ``panic!`` through the same ``run_detached`` guard (GIL released,
# ``catch_unwind``) that every heavy call of the core uses, so it proves that path, not a copy.

PANIC_CHILD = textwrap.dedent(
    """
    import threading, kassign
    from kassign import Member
    caught = []
    def hit():
        try:
            kassign._core._trigger_panic()
        except kassign.InternalError as e:
            caught.append(str(e))
    threads = [threading.Thread(target=hit) for _ in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert len(caught) == 4, caught
    assert all("deliberate panic" in c for c in caught), caught
    assert kassign.assign("roundrobin", {"a": Member(["t"]), "b": Member(["t"])}, {"t": 3}) == {
        "a": [("t", 0), ("t", 2)], "b": [("t", 1)]}
    print("SURVIVED")
    """
)


def test_panic_in_threads_is_an_exception_and_the_process_survives():
    # In a fresh interpreter so an abort (panic = "abort", a panic escaping catch_unwind) would show
    # as a signal exit code here rather than kill the test run.
    r = subprocess.run([sys.executable, "-c", PANIC_CHILD], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "SURVIVED"
    assert issubclass(kassign.InternalError, RuntimeError)
    assert not issubclass(kassign.InternalError, ValueError)  # never mistaken for bad input


# --------------------------------------------------------------------------------------------
# Adapters: bad configuration, and one bad member never fails the leader's rebalance
# --------------------------------------------------------------------------------------------


def _kp():
    # kafka-python is a dev dependency (requirements-dev.txt); imported here, not at module level,
    # so the rest of this file runs where only the core is installed.
    import kassign.kafka_python as kp

    return kp


ADAPTER_CLASSES = {
    "range": "RangeAssignor",
    "roundrobin": "RoundRobinAssignor",
    "sticky": "StickyAssignor",
    "cooperative-sticky": "CooperativeStickyAssignor",
    "lag-aware": "LagAwareAssignor",
    "fair": "FairAssignor",
    "failover": "FailoverAssignor",
}
ADAPTER_STRATEGIES = [s for s in STRATEGIES if s in ADAPTER_CLASSES]


@pytest.mark.parametrize("strategy", ADAPTER_STRATEGIES)
def test_kafka_python_adapter_rejects_bad_rack(strategy):
    cls = getattr(_kp(), ADAPTER_CLASSES[strategy])
    with pytest.raises(TypeError, match="rack"):
        cls(rack=b"r1")


@pytest.mark.parametrize("priority", ["5", 5.0, True, 2**31, -(2**31) - 1])
def test_kafka_python_failover_rejects_bad_priority(priority):
    with pytest.raises(ValueError, match="priority"):
        _kp().FailoverAssignor(priority=priority)


class _Cluster:
    """The part of kafka-python's ClusterMetadata the adapter reads."""

    def __init__(self, counts):
        self.counts = counts

    def partitions_for_topic(self, topic):
        n = self.counts.get(topic)
        return None if n is None else set(range(n))


class _JoinMember:
    """A JoinGroupResponse member as kafka-python's coordinator hands it to ``assign``: its
    metadata already decoded by kafka-python from the member's subscription bytes."""

    def __init__(self, member_id, data, group_instance_id=None):
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.metadata = ConsumerProtocolSubscription.decode(data)


# User data that no history reader can decode: a sticky v1 array claiming 2**31-1 entries, a
# truncated int32, random bytes, a partition list whose topic string runs past the end.
GARBAGE_USER_DATA = [
    b"\x7f\xff\xff\xff",
    b"\x00\x00\x00\x01\x00\x05ab",
    b"\xde\xad",
    bytes(range(256)) * 3,
]


def _wire_group(strategy):
    """Good members with real metadata (history for the sticky strategies, priorities for failover)
    plus one member per kind of garbage user data, every subscription well-formed ConsumerProtocol
    v3 bytes produced by kassign.protocol."""
    from kassign._adapter_common import ConsumerState, encode_member_metadata

    counts = {"a": 6, "b": 4}
    data = {}
    for i in range(3):
        st = ConsumerState()
        st.record([("a", i), ("a", i + 3), ("b", i)], generation=7)
        data[f"good-{i}"] = encode_member_metadata(strategy, ["a", "b"], st, priority=10 + i)
    for k, junk in enumerate(GARBAGE_USER_DATA):
        # The subscription's own owned/generation fields are sane; only the user data is junk.
        data[f"bad-{k}"] = protocol.encode_subscription(["a", "b"], junk, [("a", 5)], 7)
    return counts, data


@pytest.mark.parametrize("strategy", ADAPTER_STRATEGIES)
def test_kafka_python_leader_survives_undecodable_member_metadata(strategy, caplog):
    from support import oracles

    kp = _kp()
    counts, data = _wire_group(strategy)
    join = [_JoinMember(mid, raw) for mid, raw in data.items()]
    assignor = getattr(kp, ADAPTER_CLASSES[strategy])()
    with caplog.at_level("WARNING", logger="kassign.adapters"):
        out = assignor.assign(_Cluster(counts), join)
    # The bytes kafka-python sends, read back with its own decoder, as every member does.
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    decoded = {mid: ConsumerProtocolAssignment.decode(a) for mid, a in out.items()}
    result = {mid: [(t, p) for t, ps in a.assigned_partitions for p in ps] for mid, a in decoded.items()}
    members = {mid: Member(["a", "b"]) for mid in data}
    oracles.check_validity(members, counts, {m: sorted(v) for m, v in result.items()})
    if strategy == "cooperative-sticky":
        # One round: partitions changing owner may be withheld, only ones somebody still claims
        # (the wire claims: good-i owns a-i, a-(i+3), b-i; every bad member claims a-5, all at
        # generation 7), and never revoked from one member and given to another in this round.
        claims = {f"good-{i}": [("a", i), ("a", i + 3), ("b", i)] for i in range(3)}
        claims.update({mid: [("a", 5)] for mid in data if mid.startswith("bad-")})
        view = {mid: Member(["a", "b"], claims[mid], 7) for mid in data}
        oracles.check_withholding_justified(view, counts, result)
        oracles.check_cooperative_safety(claims, result)
    else:
        oracles.check_completeness(members, counts, result)
    history = kassign._adapter_common.HISTORY[strategy]
    if history == "sticky":
        # Each bad member is logged by id and treated as having no history, while the rebalance
        # still completes for everyone. (cooperative-sticky takes its history from the
        # subscription's own owned/generation fields, which are sane here.)
        for k in range(len(GARBAGE_USER_DATA)):
            assert f"bad-{k}" in caplog.text, caplog.text
    if strategy == "failover":
        # Malformed priority (not exactly 4 bytes) = lowest; bad-0's 4 junk bytes are a valid
        # priority (2**31-1) and win. Judged by the oracle from the wire user data.
        wire_members = {mid: Member(["a", "b"], user_data=j.metadata.user_data) for mid, j in zip(data, join)}
        oracles.check_failover_owner(wire_members, counts, result)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("junk", GARBAGE_USER_DATA)
def test_member_with_undecodable_history_has_none_and_is_logged(strategy, junk):
    # The leader's wire-history rule (rust/core/src/wire.rs, shared by the adapters and assign_wire),
    # for the two strategies that read history from user data.
    raw = protocol.encode_subscription(["a"], junk, [] if strategy == "sticky" else [("a", 1)], -1)
    members, warnings = kassign._core.members_from_wire(strategy, {"bad-member": raw}, None)
    m, text = members["bad-member"], "\n".join(warnings)
    assert m.topics == ("a",)
    if strategy == "sticky":
        assert m.owned_partitions == () and m.generation == -1
        assert "bad-member" in text and "no history" in text
    else:
        # Java reads only the first 4 bytes of cooperative-sticky user data; the owned partitions
        # come from the subscription's own field. Undecodable (< 4 bytes) -> generation -1, logged.
        assert m.owned_partitions == (("a", 1),)
        if len(junk) < 4:
            assert m.generation == -1 and "bad-member" in text
        else:
            first = int.from_bytes(junk[:4], "big", signed=True)
            assert m.generation == (first if first >= 0 else -1)


@pytest.mark.parametrize("data", [b"", b"\xff\xff", b"\x00\x03\x00\x00\x00\x01\x00\x01t\xff", bytes(range(40))])
def test_undecodable_subscription_bytes_give_an_empty_member_not_an_error(data):
    members, warnings = kassign._core.members_from_wire("range", {"junk-member": data}, None)
    m = members["junk-member"]
    assert m.topics == () and m.owned_partitions == ()
    assert "junk-member" in "\n".join(warnings)


# --------------------------------------------------------------------------------------------
# GIL: a heartbeat-like ticker keeps running during a 1M-partition assignment
# --------------------------------------------------------------------------------------------


def _ticker_gaps(work, period=0.010):
    """Run ``work`` in a thread while a ticker thread sleeps ``period`` between ticks. Returns
    (largest interval between consecutive ticks while work ran, seconds work took)."""
    ticks: list[float] = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(period)

    span: dict[str, float] = {}
    error: list[BaseException] = []

    def run():
        span["start"] = time.perf_counter()
        try:
            work()
        except BaseException as e:  # pragma: no cover - surfaced below
            error.append(e)
        span["end"] = time.perf_counter()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    time.sleep(5 * period)
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    time.sleep(5 * period)
    stop.set()
    ticker.join()
    if error:
        raise error[0]
    inside = [t for t in ticks if span["start"] - period <= t <= span["end"] + period]
    edges = [span["start"], *inside, span["end"]]
    return max(b - a for a, b in itertools.pairwise(edges)), span["end"] - span["start"]


def _million_partition_group():
    topics = {f"topic{i:03d}": 2000 for i in range(500)}
    members = {f"consumer-{i:04d}": Member(list(topics)) for i in range(2000)}
    return members, topics


@pytest.mark.slow
def test_ticker_measures_a_gil_holder():
    # Self-check of the harness: pure-Python work holding the GIL in C (a huge sort) shows up.
    # (Shuffled: timsort sorts a reversed list in linear time, too fast to show reliably.)
    import random

    data = list(range(2_000_000))
    random.Random(0).shuffle(data)
    gap, took = _ticker_gaps(lambda: sorted(data))
    assert gap > 0.05 and gap > took / 2, (gap, took)


GIL_ATTEMPTS = 3

GIL_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    try:
        # Measure kassign's GIL holds, not the shared machine's load: run ahead of other processes
        # where allowed (root, as on the project's machines); elsewhere at the normal priority.
        os.nice(-10)
    except OSError:
        pass
    sys.path.insert(0, sys.argv[2])
    import kassign
    from test_reliability import _million_partition_group, _ticker_gaps
    strategy = sys.argv[1]
    members, topics = _million_partition_group()
    out = []
    for _ in range(int(sys.argv[3])):
        result = {}
        gap, took = _ticker_gaps(lambda: result.update(kassign.assign(strategy, members, topics)))
        assert sum(map(len, result.values())) == 1_000_000
        out.append([gap, took])
        del result
    control, _ = _ticker_gaps(lambda: time.sleep(0.3))
    print(json.dumps({"attempts": out, "control": control, "nice": os.nice(0)}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_gil_ticker_during_million_partition_assignment(strategy):
    """In a fresh interpreter (a consumer process, not pytest's heap), the smallest of 3 attempts'
    largest tick gap must be <= 50 ms. A GIL hold by kassign shows in every attempt; a scheduling
    hiccup of a shared, loaded machine (the control, a GIL-free sleep in the same harness, shows
    20-80 ms then) does not repeat three times."""
    r = subprocess.run(
        [sys.executable, "-c", GIL_CHILD, strategy, os.path.dirname(__file__), str(GIL_ATTEMPTS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    gaps = rep["attempts"]
    shown = ", ".join(f"{g * 1000:.0f} ms / {t:.2f} s" for g, t in gaps)
    print(
        f"\nGIL {strategy}: largest tick gap / assignment time per attempt: {shown}; "
        f"control (GIL-free sleep) {rep['control'] * 1000:.0f} ms; niceness {rep['nice']}"
    )
    best = min(g for g, _ in gaps)
    assert best <= 0.050, f"{strategy}: a 10 ms ticker stalled >= {best * 1000:.0f} ms in every attempt ({shown})"


# --------------------------------------------------------------------------------------------
# Limits: 10M partitions (bounded memory or a fast clear error), measured in a subprocess
# --------------------------------------------------------------------------------------------

PROBE = textwrap.dedent(
    """
    import json, resource, sys, time
    import kassign
    from kassign import Member
    total, n_topics, n_members, strategy = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    topics = {f"t{i:05d}": total // n_topics for i in range(n_topics)}
    members = {f"c{i:05d}": Member(list(topics)) for i in range(n_members)}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    try:
        r = kassign.assign(strategy, members, topics)
        out = {"ok": True, "assigned": sum(map(len, r.values())), "members_out": len(r)}
    except Exception as e:
        out = {"ok": False, "error": type(e).__name__ + ": " + str(e)}
    out["seconds"] = round(time.perf_counter() - t0, 3)
    out["rss_before_mib"] = before // 1024
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps(out))
    """
)


def probe(total, n_topics, n_members, strategy, timeout=900):
    """Run one assignment in a fresh interpreter; returns its JSON report (ok/error, seconds,
    peak RSS in MiB from getrusage)."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(total), str(n_topics), str(n_members), strategy],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_over_the_limit_fails_fast_with_a_clear_error_and_no_allocation():
    out = probe(200_000_000, 2, 10, "range")
    assert not out["ok"]
    assert out["error"].startswith("InputError: partitions_per_topic") and "supported maximum" in out["error"]
    # Rejected before anything proportional to the partition count is allocated.
    assert out["peak_rss_mib"] - out["rss_before_mib"] < 50, out


LIMIT_SHAPES = [
    # (total partitions, topics, members)
    (10_000_000, 1, 1000),
    (10_000_000, 5000, 2000),
]

# Documented bound (RELIABILITY.md): peak RSS of the whole interpreter for a 10M-partition
# assignment, result objects included.
PEAK_RSS_BOUND_MIB_10M = 2048


@pytest.mark.limits  # opt-in (KASSIGN_LIMITS=1): 14 runs, ~10 min, ~1.2 GiB each; tests/conftest.py
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("total, n_topics, n_members", LIMIT_SHAPES)
def test_ten_million_partitions_bounded_memory(strategy, total, n_topics, n_members):
    out = probe(total, n_topics, n_members, strategy)
    print(f"\nLIMITS {strategy} P={total} T={n_topics} N={n_members}: {json.dumps(out)}")
    if out["ok"]:
        assert out["assigned"] == total and out["members_out"] == n_members
        assert out["peak_rss_mib"] <= PEAK_RSS_BOUND_MIB_10M, out
    else:
        assert out["error"].startswith("InputError"), out
