"""kassign.lag: the lag rule (docs/strategies/lag-aware.md) and the lag providers' contracts.

Expected values are hand-computed from the rule: next = committed if present, else end for
auto.offset.reset "latest" (any case, the default) and begin for anything else; a committed offset
below the log start counts from the log start (kassign's documented choice); lag = max(end - next, 0).
"""

import logging
import subprocess
import sys
import threading
import time

import pytest

import kassign
from kassign import Member
from kassign.lag import (
    KafkaLagProvider,
    LagProvider,
    StaticLagProvider,
    compute_lag,
    compute_lags,
    next_offset,
)

# (committed, begin, end, auto_offset_reset) -> lag
TABLE = [
    # committed present: reset policy is irrelevant
    (700, 100, 1000, "latest", 300),
    (700, 100, 1000, "earliest", 300),
    (700, 100, 1000, "none", 300),
    # committed absent
    (None, 100, 1000, "latest", 0),
    (None, 100, 1000, "earliest", 900),
    (None, 100, 1000, "none", 900),  # any value other than "latest" starts at the beginning
    (None, 100, 1000, "LATEST", 0),  # case-insensitive
    (None, 100, 1000, "Latest", 0),
    (None, 100, 1000, "Earliest", 900),
    # Kafka's "no committed offset" is -1
    (-1, 100, 1000, "latest", 0),
    (-1, 100, 1000, "earliest", 900),
    # begin > committed (records deleted by retention or delete_records): counts from the log start
    (50, 100, 1000, "latest", 900),
    (50, 100, 1000, "earliest", 900),
    (0, 400, 1000, "none", 600),
    # committed at / beyond the end
    (1000, 100, 1000, "latest", 0),
    (1200, 100, 1000, "latest", 0),
    # missing begin / end count as 0
    (None, None, 1000, "earliest", 1000),
    (300, None, 1000, "latest", 700),
    (300, 100, None, "latest", 0),
    (None, None, None, "earliest", 0),
    # empty partition
    (None, 0, 0, "earliest", 0),
    (0, 0, 0, "latest", 0),
]


@pytest.mark.parametrize("committed,begin,end,reset,expected", TABLE)
def test_lag_table(committed, begin, end, reset, expected):
    assert compute_lag(committed, begin, end, reset) == expected


# The prototype's vectors (committed, begin, end, reset) -> lag (docs/strategies/lag-aware.md).
PROTOTYPE = [
    (5555, 1111, 9999, "none", 4444),
    (5555, 0, 0, "latest", 0),
    (None, 1111, 9999, "latest", 0),
    (None, 1111, 9999, "earliest", 8888),
]


@pytest.mark.parametrize("committed,begin,end,reset,expected", PROTOTYPE)
def test_prototype_vectors(committed, begin, end, reset, expected):
    assert compute_lag(committed, begin, end, reset) == expected


def test_default_reset_is_latest():
    assert compute_lag(None, 100, 1000) == 0
    assert next_offset(None, 100, 1000) == 1000


def test_next_offset():
    assert next_offset(700, 100, 1000) == 700
    assert next_offset(50, 100, 1000) == 100  # clamped to the log start
    assert next_offset(None, 100, 1000, "earliest") == 100
    assert next_offset(None, 100, 1000, "latest") == 1000


def test_reset_must_be_a_string():
    with pytest.raises(TypeError, match="auto_offset_reset"):
        compute_lag(None, 0, 10, None)


def test_compute_lags_over_mappings():
    parts = [("a", 0), ("a", 1), ("a", 2), ("b", 0)]
    committed = {("a", 0): 10, ("a", 1): None, ("b", 0): 1}
    begin = {("a", 0): 0, ("a", 1): 5, ("a", 2): 20, ("b", 0): 3}
    end = {("a", 0): 15, ("a", 1): 50, ("a", 2): 30, ("b", 0): 9}
    assert compute_lags(parts, committed, begin, end, "earliest") == {
        ("a", 0): 5,
        ("a", 1): 45,
        ("a", 2): 10,
        ("b", 0): 6,
    }
    assert compute_lags(parts, committed, begin, end) == {("a", 0): 5, ("a", 1): 0, ("a", 2): 0, ("b", 0): 6}
    assert compute_lags([kassign.TopicPartition("a", 0)], committed, begin, end) == {("a", 0): 5}


# ----------------------------------------------------------------------------------------------
# Static provider
# ----------------------------------------------------------------------------------------------


def test_static_provider():
    p = StaticLagProvider({("t", 0): 5, ("t", 1): 7})
    assert isinstance(p, LagProvider)
    assert p.lags([("t", 0), ("t", 1), ("t", 2)]) == {("t", 0): 5, ("t", 1): 7, ("t", 2): 0}
    assert p.lags([]) == {}


@pytest.mark.parametrize(
    "mapping,exc",
    [
        ([("t", 0, 1)], TypeError),
        ({"t": 1}, TypeError),
        ({("t", 0): -1}, ValueError),
        ({("t", 0): 1.5}, TypeError),
        ({("t", 0): True}, TypeError),
        ({("t", 0): 2**63}, ValueError),
        (None, TypeError),
    ],
)
def test_static_provider_rejects_bad_mappings(mapping, exc):
    with pytest.raises(exc):
        StaticLagProvider(mapping)


# ----------------------------------------------------------------------------------------------
# Kafka provider: argument checks, timeout and fallback (no broker needed; see test_lag_live.py)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"group_id": ""},
        {"group_id": "g", "timeout_s": 0},
        {"group_id": "g", "timeout_s": -1},
        {"group_id": "g", "timeout_s": True},
    ],
)
def test_kafka_provider_argument_checks(kwargs):
    with pytest.raises(ValueError):
        KafkaLagProvider("127.0.0.1:9", **kwargs)


def test_kafka_provider_needs_kafka_python(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "kafka" else real(name, *a))
    with pytest.raises(ImportError, match="kafka-python"):
        KafkaLagProvider("127.0.0.1:9", "g")


def _closed_port():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def test_kafka_provider_unreachable_cluster_falls_back(caplog):
    provider = KafkaLagProvider(f"127.0.0.1:{_closed_port()}", "g", timeout_s=1.0)
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="kassign.lag"):
        assert provider.lags([("t", 0)]) is None
    assert time.monotonic() - t0 < 3.0
    assert any("assigning by partition count only" in r.getMessage() for r in caplog.records if r.name == "kassign.lag")


def test_kafka_provider_error_falls_back_with_warning(monkeypatch, caplog):
    provider = KafkaLagProvider("127.0.0.1:9", "g", timeout_s=2.0)

    def boom(partitions):
        raise OSError("broker exploded")

    monkeypatch.setattr(provider, "offsets", boom)
    with caplog.at_level(logging.WARNING, logger="kassign.lag"):
        assert provider.lags([("t", 0)]) is None
    assert "broker exploded" in caplog.text


def test_kafka_provider_timeout_falls_back(monkeypatch, caplog):
    provider = KafkaLagProvider("127.0.0.1:9", "g", timeout_s=0.3)
    release = threading.Event()
    monkeypatch.setattr(provider, "offsets", lambda partitions: release.wait(10))
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="kassign.lag"):
        assert provider.lags([("t", 0)]) is None
    release.set()
    assert time.monotonic() - t0 < 2.0
    assert "timed out" in caplog.text


def test_kafka_provider_runs_off_the_calling_thread(monkeypatch):
    """The fetch never runs on the caller's thread (the consumer's network thread inside assign)."""
    provider = KafkaLagProvider("127.0.0.1:9", "g", timeout_s=2.0, auto_offset_reset="earliest")
    caller = threading.current_thread()
    seen = []

    def offsets(partitions):
        seen.append(threading.current_thread())
        keys = list(partitions)
        return ({keys[0]: 40}, {k: 10 for k in keys}, {k: 100 for k in keys})

    monkeypatch.setattr(provider, "offsets", offsets)
    assert provider.lags([("t", 0), ("t", 1)]) == {("t", 0): 60, ("t", 1): 90}
    assert seen and seen[0] is not caller


def test_failed_provider_gives_count_only_balance(caplog):
    members = {"a": Member(["t"]), "b": Member(["t"])}
    provider = KafkaLagProvider(f"127.0.0.1:{_closed_port()}", "g", timeout_s=0.5)
    with caplog.at_level(logging.WARNING, logger="kassign.lag"):
        got = kassign.assign("lag-aware", members, {"t": 5}, lag_provider=provider)
    # count only: a round-robin deal in member-id order
    assert got == {"a": [("t", 0), ("t", 2), ("t", 4)], "b": [("t", 1), ("t", 3)]}


def test_kassign_imports_without_kafka_python():
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'kafka' or name.startswith('kafka.'):\n"
        "            raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import kassign, kassign.lag\n"
        "from kassign.lag import StaticLagProvider, compute_lag\n"
        "assert compute_lag(None, 1, 5, 'earliest') == 4\n"
        "m = {'a': kassign.Member(['t'])}\n"
        "p = StaticLagProvider({('t', 0): 3})\n"
        "assert kassign.assign('lag-aware', m, {'t': 1}, lag_provider=p) == {'a': [('t', 0)]}\n"
        "assert 'kafka' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
