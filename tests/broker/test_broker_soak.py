"""Long-running on a real broker (issue 38): many kassign groups under churn, then a broker crash.

Marked ``soak`` (deselected from ``make test`` by pyproject.toml's addopts); ``make test-soak`` runs
it, and .ci/run runs ``make test-soak``. Three Kafka brokers with the kassign jar
(tests/support/kafka_plugin_cluster.py; a cluster of this module's own, since the last test crashes
a broker) and ``KASSIGN_SOAK_GROUPS`` groups (default 50) of confluent-kafka-python consumers
(``group.protocol=consumer``, ``group.remote.assignor=kassign``). The consumers run in a few
processes of many consumers each (tests/support/soak_worker.py). A producer writes numbered records
throughout: record ``i`` goes to a known topic and partition, and the brokers acknowledge it.

Every describe of the groups (Kafka's Java Admin client, :class:`Describer`) checks the protocol's
own guarantee: no partition is in two members' current assignments.

:func:`test_soak_churn`, on two topics of 6 partitions:

1. Two *base* members (``base-0``, ``base-1``) of every group stay for the whole run. For
   ``KASSIGN_SOAK_SECONDS`` (default 180, the CI length; RELIABILITY.md has a 600-second run), every
   ``CHURN_EVERY`` seconds a *churn* process holding a member of a fifth of the groups joins, or one
   leaves (SIGTERM: its consumers close), or one is killed (SIGKILL), and every group is described.
   The brokers computed target assignments with ``kassign`` (counted from their logs).
2. Then every group is stable with the assignor ``kassign``: exactly the base members, each with a
   non-empty assignment equal to its target, the assignments disjoint and covering every partition.
   Every acknowledged record was consumed by every group. No two members of a group owned a
   partition at the same time, as the members' own rebalance callbacks tell it
   (tests/support/soak_ownership.py says what that check demands, and why).
3. The brokers' heap after a full GC and their anonymous resident memory beyond the committed heap
   (where a native leak of the plugin would show) grew by at most HEAP_SLACK and NATIVE_SLACK from
   the first sample (after a warm-up) to the last; the slacks come from the ``uniform`` control
   (see HEAP_SLACK).

:func:`test_broker_crash_mid_rebalance`, on two other topics, with other groups: two members per
group, then a third joins every group, and once a group coordinated by the crashed broker is seen
mid-rebalance, that broker is killed with SIGKILL and restarted on its data directory. Every group
(a third of every group's partitions lead on that broker) settles again on its three members with
the assignor ``kassign``; then the third member leaves, every group settles on its two, and the
restarted broker computed its groups' assignments with ``kassign``. Every acknowledged record
(before, during and after the crash) is consumed by every group, and no two members owned a
partition at once.

``KASSIGN_SOAK_ASSIGNOR`` (default ``kassign``) runs the same tests with ``uniform``: the control
measurement the memory tolerances come from. The figures go to ``out/soak-<test>.json``
(``KASSIGN_SOAK_OUT`` is the directory) and to stdout; RELIABILITY.md quotes them.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.kafka_broker import broker_libs, java_consumer_classpath, require_tool
from support.kafka_plugin_cluster import REPO, PluginCluster, plugin_jar
from support.soak_ownership import Ledger, overlaps

pytestmark = [pytest.mark.soak, pytest.mark.broker]

GROUPS = int(os.environ.get("KASSIGN_SOAK_GROUPS", "50"))
SECONDS = float(os.environ.get("KASSIGN_SOAK_SECONDS", "180"))
ASSIGNOR = os.environ.get("KASSIGN_SOAK_ASSIGNOR", "kassign")
OUT = Path(os.environ.get("KASSIGN_SOAK_OUT", str(REPO / "out")))
RATE = 5.0  # records per second, spread over a test's 12 partitions
CHURN_EVERY = 8.0  # seconds between churn events
MAX_CHURN = 3  # churn processes alive at once
BASE_PROCESSES = 5  # processes per base member
MEMORY_SAMPLES = 5  # broker memory samples from the end of the warm-up to the end of the churn
SETTLE_TIMEOUT = 240.0
DESCRIBE_TIMEOUT = 30.0  # one describe of all groups (GroupDescriber's Admin timeout)
CONSUME_TIMEOUT = 240.0
#: The brokers' heap committed and touched from the start (Xms = Xmx, AlwaysPreTouch), so that the
#: resident memory beyond it (``native``) is everything else: metaspace, code cache, thread stacks,
#: malloc arenas, and the plugin's native allocations.
JVM_OPTIONS = ["-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
WORKER = REPO / "tests" / "support" / "soak_worker.py"
MIB = 1024 * 1024

#: Flat means: from the first sample (after the warm-up) to the last, per broker, the heap live
#: after a full GC grows by at most HEAP_SLACK and the anonymous resident memory beyond the
#: committed heap by at most NATIVE_SLACK. Both come from the control, the same 600-second churn
#: with the broker's own ``uniform`` assignor (KASSIGN_SOAK_ASSIGNOR=uniform), where kassign's
#: library is never called: its largest growth on a broker was 10.3 MiB of heap and 13.2 MiB of
#: native memory (RELIABILITY.md, "Broker soak and crash"); each slack is that plus a margin of
#: 10 MiB, about the control's own growth again. A leak shows as growth proportional to the
#: assignments the brokers computed, which the test counts from the brokers' logs ("Computed a new
#: target assignment ... with 'kassign'"): NATIVE_SLACK / assignments is the smallest leak per
#: assignment the test is sure to catch (``native_leak_caught_per_assignment`` in the figures).
HEAP_SLACK = 20 * MIB
NATIVE_SLACK = 24 * MIB

_TARGET_LINE = re.compile(r"Computed a new target assignment for epoch \d+ with '(\w+)' assignor")


class Worker:
    def __init__(
        self,
        cluster: PluginCluster,
        name: str,
        groups: list[str],
        topics: dict[str, int],
        work: Path,
        client: str | None = None,
    ):
        self.name = name  # the process: its event and log files
        self.client = client or name  # its consumers' client.id, the member name in the events
        self.groups = groups
        self.events = work / f"{name}.jsonl"
        self.ended: float | None = None  # monotonic time of the SIGKILL, for a killed worker
        members = ",".join(f"{g}:{self.client}" for g in groups)
        with open(work / f"{name}.log", "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKER), "--bootstrap", cluster.bootstrap, "--topics", ",".join(topics)]
                + ["--members", members, "--events", str(self.events), "--assignor", ASSIGNOR],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def log_tail(self) -> str:
        return (self.events.parent / f"{self.name}.log").read_text(errors="replace")[-2000:]

    def leave(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)

    def kill(self) -> None:
        self.ended = time.monotonic()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


def member_ends(ledger: Ledger, workers: list[Worker]) -> dict[tuple[str, str], float]:
    """(group, member) -> when the member stopped consuming: its SIGKILL, or the end of its
    process's poll loops; absent while it runs."""
    out = {}
    for w in workers:
        end = w.ended if w.ended is not None else ledger.closing.get(w.events)
        if end is not None:
            out.update({(g, w.client): end for g in w.groups})
    return out


def read_events(ledger: Ledger, workers: list[Worker]) -> None:
    ledger.read([w.events for w in workers])


def judge_ownership(ledger: Ledger, workers: list[Worker], figures: dict[str, Any]) -> None:
    """No two members of a group owned a partition at once, by their callbacks
    (tests/support/soak_ownership.py says what is demanded and why)."""
    found, excused, unjudged = overlaps(ledger.ownership, member_ends(ledger, workers))
    figures["ownership"] = {
        "overlaps": len(found),
        "stale_first_assignments_excused": len(excused),
        "spans_ended_by_lost": unjudged,
    }
    if excused:
        figures["ownership"]["excused_examples"] = excused[:3]
    assert not found, found[:5]


class Producer(threading.Thread):
    """Numbered records 0, 1, ... at RATE per second; ``acked`` are those the brokers acknowledged."""

    def __init__(self, cluster: PluginCluster, topics: dict[str, int]) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer as KafkaProducer

        self.topics = topics
        self.producer = KafkaProducer(
            {"bootstrap.servers": cluster.bootstrap, "linger.ms": 20, "enable.idempotence": True, "acks": "all"}
        )
        self.acked: set[int] = set()
        self.failed: list[str] = []
        self.sent = 0
        self.halt = threading.Event()

    def _report(self, err: Any, msg: Any) -> None:
        if err is None:
            self.acked.add(int(msg.value()))
        else:
            self.failed.append(str(err))

    def where(self, i: int) -> tuple[str, int]:
        """The topic and partition of record ``i``."""
        names = sorted(self.topics)
        topic = names[i % len(names)]
        return topic, (i // len(names)) % self.topics[topic]

    def run(self) -> None:
        started = time.monotonic()
        while not self.halt.is_set():
            while self.sent < (time.monotonic() - started) * RATE:
                i = self.sent
                topic, partition = self.where(i)
                self.producer.produce(topic, value=str(i).encode(), partition=partition, on_delivery=self._report)
                self.sent += 1
            self.producer.poll(0.1)

    def stop(self) -> None:
        self.halt.set()
        self.join(30)
        assert self.producer.flush(300) == 0, "records left unsent"
        assert not self.failed, f"deliveries failed: {self.failed[:5]}"
        assert len(self.acked) == self.sent, (len(self.acked), self.sent)


class Describer:
    """Describes groups through Apache Kafka's own Admin client: one JVM running
    tests/support/java-consumer's ``GroupDescriber`` for the describer's life.

    Not confluent-kafka's ``AdminClient``: with confluent-kafka 2.16 (librdkafka 2.16.0),
    ``describe_consumer_groups`` aborted the test process (``rd_kafka_enq_once_del_source_return:
    Assertion eonce->refcnt > 0``, as in confluentinc/librdkafka#4605) in the first settle of a
    50-group run. The consumers stay confluent-kafka's: they are what is tested.
    """

    def __init__(self, cluster: PluginCluster) -> None:
        self.proc = subprocess.Popen(
            [require_tool("java"), "-Xmx128m", "-cp", java_consumer_classpath()]
            + ["kassign.tests.GroupDescriber", cluster.bootstrap, str(int(DESCRIBE_TIMEOUT * 1000))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._buffer = b""
        self.passes = 0  # describes of all the groups asked, each checked by shared_partitions

    def _line(self, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, "GroupDescriber did not answer in time"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                assert chunk, f"GroupDescriber exited with {self.proc.wait(10)}"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def describe(self, groups: list[str]) -> dict[str, dict[str, Any]]:
        """Group -> its description (``state``, ``assignor``, ``coordinator`` (a broker id),
        ``members`` with ``client``, ``assignment`` and ``target``), or ``{"error": ...}`` when
        describing it failed. Fails when a partition is in two members' current assignments."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((",".join(groups) + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + DESCRIBE_TIMEOUT + 30
        out: dict[str, dict[str, Any]] = {}
        while (line := self._line(deadline)) != b".":
            d = json.loads(line)
            out[d["group"]] = d
        assert set(out) == set(groups), sorted(set(groups) ^ set(out))
        # The protocol's own guarantee, on every describe the test makes: the coordinator never has a
        # partition in two members' current assignments.
        self.passes += 1
        shared = shared_partitions(out)
        assert not shared, f"a partition in two members' assignments: {shared[:3]}"
        return out

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)


def _parts(assignment: list[list[Any]] | None) -> list[tuple[str, int]]:
    return sorted((t, p) for t, p in assignment or [])


def shared_partitions(descriptions: dict[str, dict[str, Any]]) -> list[str]:
    """Groups where the coordinator reports a partition in two members' current assignments."""
    found = []
    for group, d in descriptions.items():
        if "error" in d:
            continue
        owned = [tp for m in d["members"] for tp in _parts(m["assignment"])]
        if len(owned) != len(set(owned)):
            found.append(f"{group}: {[(m['client'], _parts(m['assignment'])) for m in d['members']]}")
    return found


def unsettled(
    describer: Describer, groups: list[str], clients: dict[str, set[str]], topics: dict[str, int]
) -> dict[str, str]:
    """Group -> why it is not stable yet (empty when every group is): the broker reports the
    assignor ASSIGNOR, the expected clients are its members, each has reconciled to a non-empty
    target, the targets are disjoint and cover all partitions."""
    everything = {(t, p) for t, n in topics.items() for p in range(n)}
    out: dict[str, str] = {}
    for group, d in describer.describe(groups).items():
        if "error" in d:
            out[group] = f"describe: {d['error']}"
            continue
        if d["assignor"] != ASSIGNOR:
            out[group] = f"assignor {d['assignor']!r}"
            continue
        members = {m["client"] for m in d["members"]}
        if d["state"] != "STABLE" or members != clients[group] or len(d["members"]) != len(members):
            detail = {m["client"]: (len(_parts(m["assignment"])), len(_parts(m["target"]))) for m in d["members"]}
            out[group] = f"{d['state']} {sorted(members)} (owned, target) per member {detail}"
            continue
        owned: list[tuple[str, int]] = []
        for m in d["members"]:
            parts = _parts(m["assignment"])
            if not parts or parts != _parts(m["target"]):
                out[group] = f"{m['client']} owns {parts}, target {_parts(m['target'])}"
                break
            owned += parts
        else:
            if len(owned) != len(set(owned)) or set(owned) != everything:
                out[group] = f"partitions owned {sorted(owned)}"
    return out


def wait_settled(
    describer: Describer, groups: list[str], clients: dict[str, set[str]], alive: list[Worker], topics: dict[str, int]
) -> float:
    """Seconds until every group is stable in two passes in a row; fails after SETTLE_TIMEOUT."""
    started = time.monotonic()
    ok_before = False
    while True:
        for w in alive:
            assert w.proc.poll() is None, f"worker {w.name} exited with {w.proc.returncode}: {w.log_tail()}"
        bad = unsettled(describer, groups, clients, topics)
        if not bad and ok_before:
            return time.monotonic() - started
        ok_before = not bad
        assert time.monotonic() - started < SETTLE_TIMEOUT, f"{len(bad)} groups not stable: {list(bad.items())[:5]}"
        time.sleep(1.0)


def wait_consumed(ledger: Ledger, workers: list[Worker], groups: list[str], acked: set[int]) -> dict[str, int]:
    """Group -> records never consumed (empty once every group consumed every acked record)."""
    deadline = time.monotonic() + CONSUME_TIMEOUT
    while True:
        read_events(ledger, workers)
        missing = {g: len(acked - ledger.values.get(g, set())) for g in groups}
        if not any(missing.values()) or time.monotonic() > deadline:
            return {g: n for g, n in missing.items() if n}
        time.sleep(1.0)


def missing_where(ledger: Ledger, producer: Producer, missing: dict[str, int]) -> dict[str, dict[str, int]]:
    """Group -> "topic/partition" -> records of it never consumed, for the failure message."""
    out: dict[str, dict[str, int]] = {}
    for group in missing:
        for i in producer.acked - ledger.values.get(group, set()):
            topic, partition = producer.where(i)
            key = f"{topic}/{partition}"
            out.setdefault(group, {})[key] = out.setdefault(group, {}).get(key, 0) + 1
    return out


def broker_memory(cluster: PluginCluster) -> list[dict[str, int]]:
    """Per broker, after a full GC: heap used and committed (jstat -gc), VmRSS, RssAnon, and the
    anonymous resident memory beyond the committed heap (``native``), in bytes."""
    jcmd, jstat = require_tool("jcmd"), require_tool("jstat")
    out = []
    for proc in cluster.procs:
        subprocess.run([jcmd, str(proc.pid), "GC.run"], check=True, capture_output=True, timeout=120)
        lines = subprocess.run(
            [jstat, "-gc", str(proc.pid)], check=True, capture_output=True, text=True, timeout=60
        ).stdout.split("\n")
        gc = dict(zip(lines[0].split(), lines[1].split(), strict=True))  # KiB; "-" where a column does not apply
        status = {
            k: int(v.split()[0]) * 1024
            for k, v in (line.split(":", 1) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines())
            if k in ("VmRSS", "RssAnon")
        }
        used = int(sum(float(gc[k]) for k in ("S0U", "S1U", "EU", "OU")) * 1024)
        committed = int(sum(float(gc[k]) for k in ("S0C", "S1C", "EC", "OC")) * 1024)
        out.append(
            {
                "heap_used": used,
                "heap_committed": committed,
                "rss": status["VmRSS"],
                "native": status["RssAnon"] - committed,
            }
        )
    return out


def assignments_computed(cluster: PluginCluster, *nodes: int) -> dict[str, int]:
    """Assignor -> target assignments the brokers ``nodes`` (default: all three) computed with it so
    far (their server logs, which a restarted broker appends to)."""
    counts: dict[str, int] = {}
    for node in nodes or (1, 2, 3):
        text = (cluster.work_dir / f"node{node}" / "logs" / "server.log").read_text(errors="replace")
        for m in _TARGET_LINE.finditer(text):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def mib(n: float) -> float:
    return round(n / MIB, 1)


def write_figures(name: str, figures: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"soak-{name}.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\n{name} figures:", json.dumps(figures, indent=2))


@pytest.fixture(scope="module")
def soak_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PluginCluster]:
    cluster = PluginCluster(broker_libs(), plugin_jar(), tmp_path_factory.mktemp("soak-cluster"), JVM_OPTIONS)
    sys.stderr.write(f"\n[soak] starting three brokers; logs in {cluster.work_dir}\n")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def base_workers(cluster: PluginCluster, groups: list[str], topics: dict[str, int], work: Path) -> list[Worker]:
    """The two base members of every group, ``base-0`` and ``base-1``, each in BASE_PROCESSES processes
    of a share of the groups (fewer threads per process)."""
    share = math.ceil(len(groups) / BASE_PROCESSES)
    return [
        Worker(cluster, f"base-{k}.{j}", groups[j * share : (j + 1) * share], topics, work, client=f"base-{k}")
        for k in range(2)
        for j in range(BASE_PROCESSES)
        if groups[j * share : (j + 1) * share]
    ]


def stop_all(workers: list[Worker], producer: Producer, describer: Describer) -> None:
    producer.halt.set()
    describer.close()
    for w in workers:
        if w.proc.poll() is None:
            w.kill()


def test_soak_churn(soak_cluster: PluginCluster, tmp_path: Path) -> None:
    cluster = soak_cluster
    topics = {"soak-a": 6, "soak-b": 6}
    for name, n in topics.items():
        cluster.create_topic(name, n)
    describer = Describer(cluster)
    groups = [f"soak-{k:03d}" for k in range(GROUPS)]
    rng = random.Random(38)
    figures: dict[str, Any] = {"assignor": ASSIGNOR, "groups": GROUPS, "seconds": SECONDS, "partitions": 12}
    producer = Producer(cluster, topics)
    producer.start()
    ledger = Ledger()
    workers = base_workers(cluster, groups, topics, tmp_path)
    base_processes = list(workers)
    base = {w.client for w in workers}
    churn: list[Worker] = []
    counts = {"joins": 0, "leaves": 0, "kills": 0}
    try:
        figures["first_settle_seconds"] = round(
            wait_settled(describer, groups, {g: base for g in groups}, workers, topics), 1
        )
        before = assignments_computed(cluster).get(ASSIGNOR, 0)

        # 1. Churn. Memory samples: the first after a warm-up of a fifth of the run (at most a
        # minute), then evenly to the end.
        started = time.monotonic()
        warmup = min(60.0, SECONDS / 5)
        sample_at = [started + warmup + k * (SECONDS - warmup) / (MEMORY_SAMPLES - 1) for k in range(MEMORY_SAMPLES)]
        samples: list[list[dict[str, int]]] = []
        serial = 0
        while time.monotonic() - started < SECONDS:
            if len(samples) < MEMORY_SAMPLES - 1 and time.monotonic() >= sample_at[len(samples)]:
                samples.append(broker_memory(cluster))
            if not churn or (len(churn) < MAX_CHURN and rng.random() < 0.5):
                serial += 1
                chosen = sorted(rng.sample(groups, max(1, GROUPS // 5)))
                churn.append(Worker(cluster, f"churn-{serial}", chosen, topics, tmp_path))
                workers.append(churn[-1])
                counts["joins"] += 1
            else:
                w = churn.pop(rng.randrange(len(churn)))
                if rng.random() < 0.5:
                    w.leave()
                    counts["leaves"] += 1
                else:
                    w.kill()
                    counts["kills"] += 1
            describer.describe(groups)  # checks that no partition is in two assignments
            time.sleep(CHURN_EVERY)
            read_events(ledger, workers)
        samples.append(broker_memory(cluster))
        for w in churn:
            w.leave()
            counts["leaves"] += 1
        churn.clear()
        figures["churn"] = counts
        figures["assignments_computed"] = assignments_computed(cluster).get(ASSIGNOR, 0) - before
        first, last = samples[0], samples[-1]
        figures["broker_memory_mib"] = [
            {
                "heap_used": [mib(s[node]["heap_used"]) for s in samples],
                "native": [mib(s[node]["native"]) for s in samples],
                "rss": [mib(s[node]["rss"]) for s in samples],
            }
            for node in range(3)
        ]
        growth = [
            {"heap": mib(e["heap_used"] - s["heap_used"]), "native": mib(e["native"] - s["native"])}
            for s, e in zip(first, last, strict=True)
        ]
        figures["growth_mib"] = growth
        if figures["assignments_computed"]:
            figures["native_leak_caught_per_assignment"] = int(NATIVE_SLACK / figures["assignments_computed"])
        # The memory figures are recorded here, before any assertion below can end the test.
        assert figures["assignments_computed"] > 0, f"no target assignment computed with {ASSIGNOR!r}"

        # 2. Stable, nothing lost, no partition owned twice.
        figures["settle_after_churn_seconds"] = round(
            wait_settled(describer, groups, {g: base for g in groups}, base_processes, topics), 1
        )
        producer.stop()
        missing = wait_consumed(ledger, workers, groups, producer.acked)
        figures["records"] = {"produced": len(producer.acked), "lost": sum(missing.values())}
        figures["member_callbacks"] = dict(ledger.callbacks)
        assert not missing, f"records never consumed, per group: {missing}; {missing_where(ledger, producer, missing)}"
        judge_ownership(ledger, workers, figures)

        # 3. Memory flat (the figures were taken when the churn ended).
        for node, (s, e) in enumerate(zip(first, last, strict=True), 1):
            assert e["heap_used"] - s["heap_used"] <= HEAP_SLACK, (node, growth)
            assert e["native"] - s["native"] <= NATIVE_SLACK, (node, growth)
    finally:
        figures["describe_passes"] = describer.passes
        stop_all(workers, producer, describer)
        write_figures("churn", figures)


def test_broker_crash_mid_rebalance(soak_cluster: PluginCluster, tmp_path: Path) -> None:
    cluster = soak_cluster
    topics = {"crash-a": 6, "crash-b": 6}
    for name, n in topics.items():
        cluster.create_topic(name, n)
    describer = Describer(cluster)
    groups = [f"crash-{k:03d}" for k in range(GROUPS)]
    figures: dict[str, Any] = {"assignor": ASSIGNOR, "groups": GROUPS, "partitions": 12}
    producer = Producer(cluster, topics)
    producer.start()
    ledger = Ledger()
    workers = base_workers(cluster, groups, topics, tmp_path)
    base = {w.client for w in workers}
    try:
        figures["first_settle_seconds"] = round(
            wait_settled(describer, groups, {g: base for g in groups}, workers, topics), 1
        )
        # The broker to crash: of brokers 2 and 3, the coordinator of more groups. Broker 1 is also
        # the cluster's only KRaft controller; killing it would be a controller crash, not a broker's.
        coordinator = {g: d["coordinator"] for g, d in describer.describe(groups).items()}
        victim = max((2, 3), key=lambda node: sum(c == node for c in coordinator.values()))
        hosted = [g for g in groups if coordinator[g] == victim]
        assert hosted, f"brokers 2 and 3 coordinate no group: {coordinator}"
        figures["crashed_broker"] = victim
        figures["groups_it_coordinated"] = len(hosted)
        # A member of every group joins; SIGKILL the broker once one of its groups is seen mid-rebalance.
        workers.append(Worker(cluster, "joiner", groups, topics, tmp_path))
        clients = {g: base | {"joiner"} for g in groups}
        deadline = time.monotonic() + 120
        while True:
            why = unsettled(describer, hosted, clients, topics)
            moving = [g for g in hosted if "joiner" in why.get(g, "")]
            if moving:
                break
            assert time.monotonic() < deadline, "no group of the broker seen mid-rebalance with the joiner"
            time.sleep(0.05)
        # The describer (a Java Admin client) and the consumers are the ones from before the crash:
        # they must recover by themselves.
        before = assignments_computed(cluster, victim).get(ASSIGNOR, 0)
        cluster.kill(victim)
        killed_at = time.monotonic()
        figures["groups_mid_rebalance_at_kill"] = len(moving)
        cluster.restart(victim)
        figures["broker_back_seconds"] = round(time.monotonic() - killed_at, 1)
        # Every group, not only the crashed broker's: a third of every group's partitions lead there.
        figures["settle_after_restart_seconds"] = round(wait_settled(describer, groups, clients, workers, topics), 1)
        figures["recovered_groups"] = GROUPS
        # Then the joiner leaves: every group rebalances once more, and the restarted broker computes
        # its groups' new assignments with the assignor.
        joiner = workers[-1]
        joiner.leave()
        figures["settle_after_leave_seconds"] = round(
            wait_settled(describer, groups, {g: base for g in groups}, workers[:-1], topics), 1
        )
        figures["assignments_computed_after_restart"] = assignments_computed(cluster, victim).get(ASSIGNOR, 0) - before
        assert figures["assignments_computed_after_restart"] > 0, f"broker {victim} computed no assignment"
        time.sleep(5)  # records produced after the recovery too
        producer.stop()
        missing = wait_consumed(ledger, workers, groups, producer.acked)
        figures["records"] = {"produced": len(producer.acked), "lost": sum(missing.values())}
        figures["member_callbacks"] = dict(ledger.callbacks)
        assert not missing, (
            f"records never consumed after the restart: {missing}; {missing_where(ledger, producer, missing)}"
        )
        judge_ownership(ledger, workers, figures)
    finally:
        figures["describe_passes"] = describer.passes
        stop_all(workers, producer, describer)
        write_figures("crash", figures)
