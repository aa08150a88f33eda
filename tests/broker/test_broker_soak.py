"""Long-running on a real broker (issue 38): many kassign groups under churn, then a broker crash.

Not in ``make test``: marked ``soak`` (deselected by pyproject.toml's addopts); ``make test-soak``
runs it. Three Kafka brokers with the kassign jar (tests/support/kafka_plugin_cluster.py, a
cluster of the test's own, since it is killed) and ``KASSIGN_SOAK_GROUPS`` groups (default 50) of
confluent-kafka-python consumers (``group.protocol=consumer``, ``group.remote.assignor=kassign``)
on two topics of 6 partitions. The consumers run in a few processes of many consumers each
(tests/support/soak_worker.py). A producer writes numbered records throughout.

1. Two *base* processes hold one member of every group for the whole run. For
   ``KASSIGN_SOAK_SECONDS`` (default 600), every ``CHURN_EVERY`` seconds a *churn* process holding a
   member of a fifth of the groups joins, or one leaves (SIGTERM: its consumers close), or one is
   killed (SIGKILL).
2. Then every group must be stable: exactly the base members, each with a non-empty assignment
   equal to its target, no partition in two members' assignments, every partition owned. Every
   record produced (acknowledged by the brokers) is consumed by every group at least once.
3. The brokers' heap after a full GC (``jcmd GC.run``, then ``jstat -gc``) and their anonymous
   resident memory beyond the committed heap (``RssAnon`` in /proc/PID/status, where a native leak
   of the plugin would show) are compared between the start (after a warm-up) and the end.
4. A member of every group joins, and while groups are mid-rebalance (a group with the new member
   not yet stable) the three brokers are killed with SIGKILL and restarted on their data
   directories. Every group must settle again with its three members and consume every record.

The figures go to ``out/soak.json`` (``KASSIGN_SOAK_OUT``) and to stdout; RELIABILITY.md quotes them.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_broker_server_assignors import _parts

from support.kafka_broker import broker_libs, require_tool
from support.kafka_plugin_cluster import REPO, PluginCluster, plugin_jar

pytestmark = [pytest.mark.soak, pytest.mark.broker]

GROUPS = int(os.environ.get("KASSIGN_SOAK_GROUPS", "50"))
SECONDS = float(os.environ.get("KASSIGN_SOAK_SECONDS", "600"))
OUT = Path(os.environ.get("KASSIGN_SOAK_OUT", str(REPO / "out" / "soak.json")))
TOPICS = {"soak-a": 6, "soak-b": 6}
RATE = 20.0  # records per second, spread over the 12 partitions
CHURN_EVERY = 8.0  # seconds between churn events
MAX_CHURN = 3  # churn processes alive at once
SETTLE_TIMEOUT = 240.0
CONSUME_TIMEOUT = 240.0
#: The brokers' heap committed and touched from the start (Xms = Xmx, AlwaysPreTouch), so that the
#: resident memory beyond it (``native``) is everything else: metaspace, code cache, thread stacks,
#: and the plugin's native allocations.
JVM_OPTIONS = ["-Xms512m", "-Xmx512m", "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
WORKER = REPO / "tests" / "support" / "soak_worker.py"
MIB = 1024 * 1024

#: Flat means: the heap live after a full GC grows by at most HEAP_SLACK, and the anonymous resident
#: memory beyond the committed heap by at most NATIVE_SLACK, per broker. Both are well under what a
#: leak of the plugin's per-call memory would add over the run's assignments (docs/broker.md
#: bounds one call; RELIABILITY.md gives the arithmetic), and above what the broker's own caches and
#: JIT move between two measurements.
HEAP_SLACK = 24 * MIB
NATIVE_SLACK = 32 * MIB


class Worker:
    def __init__(self, cluster: PluginCluster, name: str, groups: list[str], work_dir: Path) -> None:
        self.name = name
        self.groups = groups
        self.events = work_dir / f"{name}.jsonl"
        members = ",".join(f"{g}:{name}" for g in groups)
        with open(work_dir / f"{name}.log", "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKER), "--bootstrap", cluster.bootstrap, "--topics", ",".join(TOPICS)]
                + ["--members", members, "--events", str(self.events)],
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
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


class Ledger:
    """What the workers consumed, per group, read incrementally from their event files."""

    def __init__(self) -> None:
        self.values: dict[str, set[int]] = {}
        self.callbacks = {"assign": 0, "revoke": 0, "lost": 0}
        self._offsets: dict[Path, int] = {}

    def read(self, workers: list[Worker]) -> None:
        for w in workers:
            if not w.events.exists():
                continue
            with open(w.events, "rb") as fh:
                fh.seek(self._offsets.get(w.events, 0))
                data = fh.read()
            end = data.rfind(b"\n") + 1  # a line still being written is read next time
            self._offsets[w.events] = self._offsets.get(w.events, 0) + end
            for line in data[:end].splitlines():
                e = json.loads(line)
                if e["ev"] == "records":
                    self.values.setdefault(e["g"], set()).update(e["v"])
                elif e["ev"] in self.callbacks:
                    self.callbacks[e["ev"]] += 1


class Producer(threading.Thread):
    """Numbered records 0, 1, ... at RATE per second; ``acked`` are those the brokers acknowledged."""

    def __init__(self, cluster: PluginCluster) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer as KafkaProducer

        self.producer = KafkaProducer(
            {"bootstrap.servers": cluster.bootstrap, "linger.ms": 20, "enable.idempotence": True, "acks": "all"}
        )
        self.acked: set[int] = set()
        self.failed: list[str] = []
        self.sent = 0
        self._stop = threading.Event()

    def _report(self, err: Any, msg: Any) -> None:
        if err is None:
            self.acked.add(int(msg.value()))
        else:
            self.failed.append(str(err))

    def run(self) -> None:
        names = sorted(TOPICS)
        started = time.monotonic()
        while not self._stop.is_set():
            while self.sent < (time.monotonic() - started) * RATE:
                i = self.sent
                topic = names[i % len(names)]
                self.producer.produce(
                    topic, value=str(i).encode(), partition=(i // len(names)) % TOPICS[topic], on_delivery=self._report
                )
                self.sent += 1
            self.producer.poll(0.1)

    def stop(self) -> None:
        self._stop.set()
        self.join(30)
        assert self.producer.flush(300) == 0, "records left unsent"


def unsettled(admin: Any, groups: list[str], clients: dict[str, set[str]]) -> dict[str, str]:
    """Group -> why it is not stable yet (empty when every group is): the broker reports the
    assignor ``kassign``, the expected clients are its members, each has reconciled to a non-empty
    target, the targets are disjoint and cover all partitions."""
    from confluent_kafka import ConsumerGroupState, KafkaException

    everything = {(t, p) for t, n in TOPICS.items() for p in range(n)}
    out: dict[str, str] = {}
    for group, fut in admin.describe_consumer_groups(groups, request_timeout=30).items():
        try:
            d = fut.result()
        except KafkaException as exc:
            out[group] = f"describe: {exc}"
            continue
        if d.partition_assignor != "kassign":
            out[group] = f"assignor {d.partition_assignor!r}"
            continue
        members = {m.client_id for m in d.members}
        if d.state != ConsumerGroupState.STABLE or members != clients[group] or len(d.members) != len(members):
            out[group] = f"{d.state} {sorted(members)}"
            continue
        owned: list[tuple[str, int]] = []
        for m in d.members:
            parts = _parts(m.assignment)
            if not parts or parts != _parts(m.target_assignment):
                out[group] = f"{m.client_id} owns {parts}, target {_parts(m.target_assignment)}"
                break
            owned += parts
        else:
            if len(owned) != len(set(owned)) or set(owned) != everything:
                out[group] = f"partitions owned {sorted(owned)}"
    return out


def wait_settled(admin: Any, groups: list[str], clients: dict[str, set[str]], alive: list[Worker]) -> float:
    """Seconds until every group is stable in two passes in a row; fails after SETTLE_TIMEOUT."""
    started = time.monotonic()
    ok_before = False
    while True:
        for w in alive:
            assert w.proc.poll() is None, f"worker {w.name} exited with {w.proc.returncode}: {w.log_tail()}"
        bad = unsettled(admin, groups, clients)
        if not bad and ok_before:
            return time.monotonic() - started
        ok_before = not bad
        assert time.monotonic() - started < SETTLE_TIMEOUT, f"{len(bad)} groups not stable: {list(bad.items())[:5]}"
        time.sleep(1.0)


def wait_consumed(ledger: Ledger, workers: list[Worker], groups: list[str], acked: set[int]) -> dict[str, int]:
    """Group -> records never consumed (empty dicts once every group consumed every acked record)."""
    deadline = time.monotonic() + CONSUME_TIMEOUT
    while True:
        ledger.read(workers)
        missing = {g: len(acked - ledger.values.get(g, set())) for g in groups}
        if not any(missing.values()) or time.monotonic() > deadline:
            return {g: n for g, n in missing.items() if n}
        time.sleep(1.0)


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
            if k in ("VmRSS", "RssAnon", "RssFile")
        }
        used = int(sum(float(gc[k]) for k in ("S0U", "S1U", "EU", "OU")) * 1024)
        committed = int(sum(float(gc[k]) for k in ("S0C", "S1C", "EC", "OC")) * 1024)
        out.append(
            {
                "heap_used": used,
                "heap_committed": committed,
                "rss": status["VmRSS"],
                "rss_anon": status["RssAnon"],
                "rss_file": status["RssFile"],
                "native": status["RssAnon"] - committed,
            }
        )
    return out


@pytest.fixture
def soak_cluster(tmp_path):
    cluster = PluginCluster(broker_libs(), plugin_jar(), tmp_path / "cluster", JVM_OPTIONS)
    sys.stderr.write(f"\n[soak] starting three brokers; logs in {cluster.work_dir}\n")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def test_soak_then_broker_crash(soak_cluster, tmp_path):
    from confluent_kafka.admin import AdminClient

    cluster = soak_cluster
    for name, n in TOPICS.items():
        cluster.create_topic(name, n)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    groups = [f"soak-{k:03d}" for k in range(GROUPS)]
    work = tmp_path / "workers"
    work.mkdir()
    rng = random.Random(38)
    figures: dict[str, Any] = {"groups": GROUPS, "seconds": SECONDS, "partitions": sum(TOPICS.values())}
    producer = Producer(cluster)
    producer.start()
    ledger = Ledger()
    workers = [Worker(cluster, f"base-{k}", groups, work) for k in range(2)]
    base = {w.name for w in workers}
    churn: list[Worker] = []
    counts = {"joins": 0, "leaves": 0, "kills": 0}
    try:
        figures["first_settle_seconds"] = round(wait_settled(admin, groups, {g: base for g in groups}, workers), 1)

        # 1. Churn; the start figures after a warm-up of a fifth of the run (at most a minute).
        started = time.monotonic()
        warmup = started + min(60.0, SECONDS / 5)
        start_memory = None
        serial = 0
        while time.monotonic() - started < SECONDS:
            if start_memory is None and time.monotonic() >= warmup:
                start_memory = broker_memory(cluster)
            if not churn or (len(churn) < MAX_CHURN and rng.random() < 0.5):
                serial += 1
                chosen = sorted(rng.sample(groups, max(1, GROUPS // 5)))
                churn.append(Worker(cluster, f"churn-{serial}", chosen, work))
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
            time.sleep(CHURN_EVERY)
            ledger.read(workers)
        for w in churn:
            w.leave()
            counts["leaves"] += 1
        churn.clear()
        if start_memory is None:
            start_memory = broker_memory(cluster)

        # 2. Stable, and nothing lost.
        figures["churn"] = counts
        figures["settle_after_churn_seconds"] = round(
            wait_settled(admin, groups, {g: base for g in groups}, workers[:2]), 1
        )
        acked = set(producer.acked)
        missing = wait_consumed(ledger, workers, groups, acked)
        figures["soak_records"] = {"produced": len(acked), "lost": sum(missing.values())}
        assert not missing, f"records never consumed, per group: {missing}"

        # 3. Memory flat.
        end_memory = broker_memory(cluster)
        figures["broker_memory"] = {"start": start_memory, "end": end_memory}
        for node, (s, e) in enumerate(zip(start_memory, end_memory, strict=True), 1):
            assert e["heap_used"] - s["heap_used"] <= HEAP_SLACK, (node, s, e)
            assert e["native"] - s["native"] <= NATIVE_SLACK, (node, s, e)

        # 4. A member of every group joins; SIGKILL the brokers while groups are mid-rebalance.
        workers.append(Worker(cluster, "joiner", groups, work))
        clients = {g: base | {"joiner"} for g in groups}
        deadline = time.monotonic() + 120
        while True:
            moving = [g for g, why in unsettled(admin, groups, clients).items() if "joiner" in why]
            if moving:
                break
            assert time.monotonic() < deadline, "no group seen mid-rebalance with the joiner"
            time.sleep(0.05)
        cluster.kill()
        killed_at = time.monotonic()
        figures["restart"] = {"groups_mid_rebalance_at_kill": len(moving)}
        cluster.restart()
        figures["restart"]["brokers_back_seconds"] = round(time.monotonic() - killed_at, 1)
        figures["restart"]["settle_seconds"] = round(
            wait_settled(admin, groups, clients, workers[:2] + workers[-1:]), 1
        )
        time.sleep(5)  # records produced after the recovery too
        producer.stop()
        assert not producer.failed, producer.failed[:5]
        acked = set(producer.acked)
        missing = wait_consumed(ledger, workers, groups, acked)
        figures["records"] = {
            "produced": len(acked),
            "consumed_min_per_group": min(len(ledger.values.get(g, set()) & acked) for g in groups),
            "lost": sum(missing.values()),
        }
        figures["member_callbacks"] = dict(ledger.callbacks)
        assert not missing, f"records never consumed after the restart, per group: {missing}"
        figures["restart"]["recovered_groups"] = GROUPS
    finally:
        if producer.is_alive():
            producer._stop.set()
        for w in workers:
            if w.proc.poll() is None:
                w.kill()
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(figures, indent=2) + "\n")
        print("\nsoak figures:", json.dumps(figures, indent=2))
