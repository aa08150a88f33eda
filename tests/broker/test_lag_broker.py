"""lag-aware and kassign.lag against the real broker: skewed backlogs, a group's committed offsets, the live lag
provider (kassign.lag.KafkaLagProvider) and a lag-aware group.

The provider reads offsets through kafka-python's *admin* client (OffsetFetch + ListOffsets from
KafkaAdminClient). It is judged against numbers obtained independently of it:

* what this test produced (message counts per partition = end offsets, by construction);
* what this test committed and what it deleted with DeleteRecords (committed offsets, log starts);
* the same offsets read back through a *consumer* (KafkaConsumer.committed / beginning_offsets /
  end_offsets: the consumer's fetcher and coordinator, another code path);

and the lag rule (kassign.lag's module docstring) re-derived here from those numbers.

Then the lags drive ``lag-aware`` assignments, checked by the oracles (validity, completeness,
per-topic count balance) and by the greedy bound (per topic, max - min member lag <= the topic's
largest partition lag; tests/unit/test_lag_quality.py explains why it holds), and a real group of three
kafka-python consumers with ``LagAwareAssignor(lag_provider=KafkaLagProvider(...))`` must end up
with exactly such an assignment.
"""

from __future__ import annotations

import threading
import time

import pytest

import kassign
from kassign import Member
from support import kafka_python_join, oracles

pytestmark = pytest.mark.broker

# Backlog per partition (messages produced), skewed: a few partitions hold most of it.
BACKLOG = {
    "hot": [1500, 20, 400, 0, 60, 900],
    "warm": [30, 700, 5, 250],
}
# Offsets the group commits (None = no committed offset for that partition).
COMMITTED = {
    "hot": [100, 20, None, None, 10, 0],
    "warm": [None, 50, 5, 3],
}
# Records deleted from the head of a partition (log start moved past the committed offset).
DELETE_BEFORE = {("hot", 0): 300, ("warm", 3): 100}


def _expected_lag(committed, begin, end, reset):
    """The lag rule, restated from kassign.lag's docstring: next = committed (clamped up to the log
    start) or, without one, end for "latest" / begin otherwise; lag = max(end - next, 0)."""
    if committed is None:
        nxt = end if reset.lower() == "latest" else begin
    else:
        nxt = max(committed, begin)
    return max(end - nxt, 0)


@pytest.fixture(scope="module")
def backlog(kafka_broker):
    """Topics with the skewed backlogs, a group with committed offsets, and some records deleted.
    Returns (names: logical -> real topic name, group id)."""
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTP
    from kafka.structs import OffsetAndMetadata

    names = {logical: kafka_broker.unique_name(f"lag-{logical}") for logical in BACKLOG}
    for logical, counts in BACKLOG.items():
        kafka_broker.create_topic(names[logical], partitions=len(counts))
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap, linger_ms=20, acks=1, max_block_ms=30000)
    try:
        for logical, counts in BACKLOG.items():
            for p, n in enumerate(counts):
                for i in range(n):
                    producer.send(names[logical], value=b"%d" % i, partition=p)
        producer.flush(timeout=120)
    finally:
        producer.close(timeout=10)

    group = kafka_broker.unique_name("lag-group")
    committer = KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        offsets = {
            KTP(names[logical], p): OffsetAndMetadata(off, "", -1)
            for logical, offs in COMMITTED.items()
            for p, off in enumerate(offs)
            if off is not None
        }
        committer.commit(offsets)
    finally:
        committer.close()
    kafka_broker.admin().delete_records(
        {KTP(names[t], p): off for (t, p), off in DELETE_BEFORE.items()}, timeout_ms=30000
    )
    return names, group


def _consumer_view(kafka_broker, names, group):
    """(committed, begin, end) through a KafkaConsumer of the group (not the admin client)."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP

    c = KafkaConsumer(bootstrap_servers=kafka_broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        tps = [KTP(names[t], p) for t, counts in BACKLOG.items() for p in range(len(counts))]
        begin = {(tp.topic, tp.partition): o for tp, o in c.beginning_offsets(tps).items()}
        end = {(tp.topic, tp.partition): o for tp, o in c.end_offsets(tps).items()}
        committed = {}
        for tp in tps:
            om = c.committed(tp)
            committed[(tp.topic, tp.partition)] = om if om is None or isinstance(om, int) else om.offset
        return committed, begin, end
    finally:
        c.close()


def _keys(names):
    return [(names[t], p) for t, counts in BACKLOG.items() for p in range(len(counts))]


@pytest.mark.parametrize("reset", ["latest", "earliest"])
def test_live_provider_matches_the_broker(kafka_broker, backlog, reset):
    from kassign.lag import KafkaLagProvider

    names, group = backlog
    committed, begin, end = _consumer_view(kafka_broker, names, group)
    # Ground truth written by this test: produced counts, committed offsets, deleted heads.
    for t, counts in BACKLOG.items():
        for p, n in enumerate(counts):
            key = (names[t], p)
            assert end[key] == n
            assert begin[key] == DELETE_BEFORE.get((t, p), 0)
            assert committed[key] == COMMITTED[t][p]

    provider = KafkaLagProvider(kafka_broker.bootstrap, group, timeout_s=30, auto_offset_reset=reset)
    c2, b2, e2 = provider.offsets(_keys(names))
    assert (c2, b2, e2) == (committed, begin, end)
    lags = provider.lags(_keys(names))
    expected = {k: _expected_lag(committed[k], begin[k], end[k], reset) for k in _keys(names)}
    assert lags == expected
    # The skew is real: the log-start clamp and the reset rule both matter in this data.
    assert lags[(names["hot"], 0)] == 1500 - 300  # committed 100 < log start 300
    assert lags[(names["hot"], 2)] == (0 if reset == "latest" else 400)
    top2 = sum(sorted(lags.values())[-2:])
    assert 2 * top2 > sum(lags.values())  # two of ten partitions hold most of the lag


def _spread_ok(members, counts, lags, result):
    oracles.check_validity(members, counts, result)
    oracles.check_completeness(members, counts, result)
    oracles.check_per_topic_balance(members, counts, result)
    for t in counts:
        per = {m: sum(lags.get((tp[0], tp[1]), 0) for tp in tps if tp[0] == t) for m, tps in result.items()}
        top = max(lags.get((t, p), 0) for p in range(counts[t]))
        assert max(per.values()) - min(per.values()) <= top, (t, per)


def test_lag_aware_assignment_over_live_lags_balances_them(kafka_broker, backlog):
    from kassign.lag import KafkaLagProvider

    names, group = backlog
    counts = {names[t]: len(c) for t, c in BACKLOG.items()}
    members = {f"c{i}": Member(list(counts)) for i in range(3)}
    provider = KafkaLagProvider(kafka_broker.bootstrap, group, timeout_s=30, auto_offset_reset="earliest")
    lags = provider.lags(_keys(names))
    assert lags is not None
    by_value = kassign.assign("lag-aware", members, counts, lags=lags)
    by_provider = kassign.assign("lag-aware", members, counts, lag_provider=provider)
    assert by_provider == by_value
    _spread_ok(members, counts, lags, by_value)
    # Count-only balance would be equally valid; lag-aware must also not be worse than the bound
    # on the total: every member's lag is within (largest lag per topic, summed) of every other's.
    per = {m: sum(lags[(tp[0], tp[1])] for tp in tps) for m, tps in by_value.items()}
    slack = sum(max(lags[(t, p)] for p in range(n)) for t, n in counts.items())
    assert max(per.values()) - min(per.values()) <= slack


def test_lag_aware_group_on_the_broker(kafka_broker, backlog):
    """Three kafka-python consumers join with LagAwareAssignor + the live provider; the leader's
    assignment (what the consumers end up owning) is lag-aware over the broker's lags."""
    from kafka import KafkaConsumer

    from kassign.kafka_python import LagAwareAssignor
    from kassign.lag import KafkaLagProvider

    names, group = backlog
    counts = {names[t]: len(c) for t, c in BACKLOG.items()}
    provider = KafkaLagProvider(kafka_broker.bootstrap, group, timeout_s=30, auto_offset_reset="earliest")
    lags_before = provider.lags(_keys(names))
    consumers = [
        KafkaConsumer(
            *counts,
            bootstrap_servers=kafka_broker.bootstrap,
            group_id=group,
            client_id=f"lag-c{i}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=1,
            fetch_max_bytes=1024,
            max_partition_fetch_bytes=1024,
            partition_assignment_strategy=[LagAwareAssignor(lag_provider=provider)],
            session_timeout_ms=30000,
            heartbeat_interval_ms=1000,
        )
        for i in range(3)
    ]
    stop = threading.Event()
    errors = []

    def run(c):
        try:
            while not stop.is_set():
                c.poll(timeout_ms=100)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    for c in consumers:  # kafka-python 3.0.12 can discard a finished join between polls (RELIABILITY.md)
        kafka_python_join.install(c)
    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in consumers]
    try:
        for t in threads:  # all at once: one rebalance, not one per consumer
            t.start()
        # Generous: every rebalance has the leader read offsets with a new admin client, which on a
        # loaded 2-core machine can take seconds.
        deadline = time.time() + 180
        dumped = False
        stable = None
        while time.time() < deadline:
            if not dumped and time.time() > deadline - 120:
                # Not settled after 60 s: record where every thread is, for the failure report.
                import faulthandler
                import sys

                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                dumped = True
            owned = [frozenset((tp.topic, tp.partition) for tp in c.assignment()) for c in consumers]
            if all(owned) and sum(map(len, owned)) == sum(counts.values()):
                if stable == owned:
                    break
                stable = owned
            time.sleep(2)
        else:
            pytest.fail(f"group did not settle on a full assignment: {[c.assignment() for c in consumers]}")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
        for c in consumers:
            c.close(autocommit=False)
    assert not errors, errors
    # Nobody committed during the run (auto-commit off), so the lags the leader read are these.
    assert provider.lags(_keys(names)) == lags_before
    members = {f"c{i}": Member(list(counts)) for i in range(3)}
    result = {f"c{i}": sorted(o) for i, o in enumerate(stable)}
    _spread_ok(members, counts, lags_before, result)
    # The same assignment, up to which consumer got which member id, as lag-aware computes it.
    expected = kassign.assign("lag-aware", members, counts, lags=lags_before)
    assert sorted(map(sorted, expected.values())) == sorted(map(sorted, result.values()))
