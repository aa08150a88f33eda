"""Three Kafka brokers on loopback, in racks a, b and c, with kassign's broker plugin (pytest plugin).

Loaded from ``tests/conftest.py``. The ``plugin_cluster`` session fixture starts Apache Kafka (the
version and jars of ``tests/support/kafka_broker.py``) in KRaft mode: node 1 is broker and controller,
nodes 2 and 3 are brokers, each with ``broker.rack`` a, b, c. The jar that ``make broker-plugin``
builds (``dist/kassign-broker-<version>.jar``) is on every broker's class path and
``group.consumer.assignors`` is ``kassign.broker.KassignAssignor,uniform,range``, as
docs/broker.md tells users to configure it. Consumer-group session and heartbeat intervals are
short so that a killed member leaves within seconds.

:meth:`PluginCluster.kill` and :meth:`PluginCluster.restart` crash one broker (SIGKILL) and start it
again on its data directory.

:meth:`PluginCluster.create_topic` places partition ``p`` on broker ``p % 3 + 1`` (replication
factor 1), so partition ``p``'s only replica is on rack ``"abc"[p % 3]``.
"""

from __future__ import annotations

import base64
import contextlib
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support.kafka_broker import (
    JVM_OPTIONS,
    LOG4J2_CONFIG,
    START_TIMEOUT,
    STOP_TIMEOUT,
    broker_libs,
    free_port,
    require_tool,
)

REPO = Path(__file__).resolve().parents[2]
RACKS = ("a", "b", "c")
ASSIGNORS = "kassign.broker.KassignAssignor,uniform,range"

SETTINGS = {
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "num.partitions": "1",
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "group.consumer.assignors": ASSIGNORS,
    "group.consumer.min.session.timeout.ms": "3000",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "1000",
    "log.segment.bytes": str(16 * 1024 * 1024),
}


def plugin_jar() -> Path:
    """``dist/kassign-broker-<version>.jar`` (Cargo.toml's version); a missing jar fails the test."""
    match = re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M)
    assert match, "no version in Cargo.toml"
    jar = REPO / "dist" / f"kassign-broker-{match.group(1)}.jar"
    if not jar.exists():
        pytest.fail(f"{jar} is missing: `make broker-plugin` builds it (`make test` does first)", pytrace=False)
    return jar


def java_uuid_string(librdkafka_form: str) -> str:
    """A topic id as Java's ``Uuid.toString()`` spells it (URL-safe base64: ``-`` and ``_``) from
    librdkafka's spelling (standard base64: ``+`` and ``/``). The plugin orders topics by Java's
    spelling, and the two alphabets sort differently."""
    return librdkafka_form.replace("+", "-").replace("/", "_")


class PluginCluster:
    def __init__(self, libs: Path, jar: Path, work_dir: Path, jvm_options: list[str] | None = None) -> None:
        self.libs = libs
        self.jvm_options = JVM_OPTIONS if jvm_options is None else jvm_options
        self.jar = jar
        self.work_dir = work_dir
        ports: set[int] = set()
        while len(ports) < 4:
            ports.add(free_port())
        p = sorted(ports)
        self.controller_port = p[0]
        self.ports = p[1:]
        self.bootstrap = ",".join(f"127.0.0.1:{port}" for port in self.ports)
        self.procs: list[subprocess.Popen[bytes]] = []
        self._names = 0

    def _java(self, node: int, main: str, *args: str) -> list[str]:
        log_dir = self.work_dir / f"node{node}" / "logs"
        return [
            require_tool("java"),
            *self.jvm_options,
            f"-Dlog4j2.configurationFile={self.work_dir / f'node{node}' / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={log_dir}",
            "-cp",
            f"{self.libs / '*'}:{self.jar}",
            main,
            *args,
        ]

    def start(self) -> None:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        for node in (1, 2, 3):
            d = self.work_dir / f"node{node}"
            (d / "logs").mkdir(parents=True, exist_ok=True)
            settings = dict(SETTINGS)
            port = self.ports[node - 1]
            settings.update(
                {
                    "node.id": str(node),
                    "broker.rack": RACKS[node - 1],
                    "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
                    "log.dirs": str(d / "data"),
                    "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
                }
            )
            if node == 1:
                settings["process.roles"] = "broker,controller"
                settings["listeners"] = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{self.controller_port}"
            else:
                settings["process.roles"] = "broker"
                settings["listeners"] = f"PLAINTEXT://127.0.0.1:{port}"
            props = d / "server.properties"
            props.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
            (d / "log4j2.properties").write_text(LOG4J2_CONFIG.format(log=d / "logs" / "server.log"))
            fmt_args = ["format", f"--cluster-id={cluster_id}", "-c", str(props)]
            if node == 1:
                fmt_args += ["--feature", "group.version=1"]
            with open(d / "logs" / "format.log", "w") as log:
                fmt = subprocess.run(
                    self._java(node, "kafka.tools.StorageTool", *fmt_args),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=120,
                    check=False,
                )
            if fmt.returncode != 0:
                raise RuntimeError(f"StorageTool format failed for node {node}; see {d / 'logs'}")
            self.procs.append(self._launch(node))
        self._wait_ready(time.monotonic() + START_TIMEOUT * 2)

    def _launch(self, node: int) -> subprocess.Popen[bytes]:
        d = self.work_dir / f"node{node}"
        with open(d / "logs" / "stdout.log", "ab") as out:
            return subprocess.Popen(
                self._java(node, "kafka.Kafka", str(d / "server.properties")),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def kill(self, node: int) -> None:
        """SIGKILL broker ``node`` (1, 2 or 3): a crash, no controlled shutdown, nothing flushed by Kafka."""
        proc = self.procs[node - 1]
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(STOP_TIMEOUT)

    def restart(self, node: int) -> None:
        """Start broker ``node`` again on its data directory (after :meth:`kill`) and wait until it
        logged the end of its startup and the three brokers answer metadata."""
        assert self.procs[node - 1].poll() is not None, "restart() after kill()"
        started = self._starts(node)
        self.procs[node - 1] = self._launch(node)
        self._wait_ready(time.monotonic() + START_TIMEOUT * 2, lambda: self._starts(node) > started)

    def _starts(self, node: int) -> int:
        """How often broker ``node`` logged the end of its startup (the log is appended to)."""
        log = self.work_dir / f"node{node}" / "logs" / "server.log"
        return log.read_text(errors="replace").count("Kafka Server started") if log.exists() else 0

    def _wait_ready(self, deadline: float, started: Callable[[], bool] = lambda: True) -> None:
        """All three brokers registered and answering metadata, once ``started()`` holds (the other
        brokers' metadata still lists a broker that has just been killed)."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        last: Any = None
        while time.monotonic() < deadline:
            for k, proc in enumerate(self.procs):
                if proc.poll() is not None:
                    raise RuntimeError(f"broker node {k + 1} exited with {proc.returncode}; see {self.work_dir}")
            try:
                md = admin.list_topics(timeout=5)
                last = sorted(md.brokers)
                if last == [1, 2, 3] and started():
                    return
            except Exception as exc:  # the admin client raises several error types while brokers boot
                last = exc
            time.sleep(0.5)
        raise TimeoutError(f"the three brokers did not come up ({last!r}, started: {started()}); see {self.work_dir}")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def unique_name(self, prefix: str) -> str:
        self._names += 1
        return f"{prefix}-{self._names}-{uuid.uuid4().hex[:6]}"

    def create_topic(self, name: str, partitions: int, timeout: float = 60.0) -> str:
        """Replication factor 1, partition p on broker p % 3 + 1 (rack "abc"[p % 3])."""
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        spec = NewTopic(name, partitions, -1, replica_assignment=[[p % 3 + 1] for p in range(partitions)])
        admin.create_topics([spec])[name].result(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            md = admin.list_topics(name, timeout=5).topics.get(name)
            if md is not None and md.error is None and len(md.partitions) == partitions:
                if all(p.leader >= 0 for p in md.partitions.values()):
                    return name
            time.sleep(0.2)
        raise TimeoutError(f"topic {name} not ready in {timeout}s")

    def topic_ids(self, names: list[str]) -> dict[str, str]:
        """Topic name -> topic id (Kafka's base64 form, as ``Uuid.toString()`` and the plugin use)."""
        from confluent_kafka import TopicCollection
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        out = {}
        for name, fut in admin.describe_topics(TopicCollection(names)).items():
            out[name] = java_uuid_string(str(fut.result(30).topic_id))
        return out

    def server_logs(self) -> str:
        parts = []
        for node in (1, 2, 3):
            with contextlib.suppress(OSError):
                text = (self.work_dir / f"node{node}" / "logs" / "server.log").read_text(errors="replace")
                parts.append(f"--- node {node} ---\n{text[-3000:]}")
        return "\n".join(parts)


@pytest.fixture(scope="session")
def plugin_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PluginCluster]:
    """Three brokers in racks a, b, c with kassign's broker plugin, for the whole session."""
    cluster = PluginCluster(broker_libs(), plugin_jar(), tmp_path_factory.mktemp("plugin-cluster"))
    sys.stderr.write(f"\n[plugin_cluster] starting three brokers; logs in {cluster.work_dir}\n")
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
