"""A real single-node Apache Kafka broker for the broker tests (pytest plugin).

Loaded from ``tests/conftest.py`` (``pytest_plugins = ["kafka_broker"]``). It provides:

* ``kafka_broker`` (session fixture): Apache Kafka (version pinned in ``tests/support/broker/pom.xml``),
  KRaft combined mode (broker + controller, one node), PLAINTEXT listener on a free loopback port,
  storage formatted with the broker's own ``kafka.tools.StorageTool``, started once per session and
  stopped at its end. Yields a :class:`KafkaBroker` (``.bootstrap`` = ``"127.0.0.1:PORT"`` plus
  helpers to create topics, produce numbered messages and describe groups).
* ``java_consumer`` (session fixture): the classpath of the tiny Java consumer of
  ``tests/support/java-consumer`` (kafka-clients from Maven Central), built once into the cache.

Jars come from Maven Central through ``mvn`` the first time (into ``~/.cache/kassign/kafka-<version>``,
or ``$KASSIGN_CACHE_DIR``); later runs reuse the cache. Java and Maven are required: when they are
missing the broker tests FAIL (they are never skipped). Broker logs live under pytest's base temp
directory; their path is printed at start and attached to every failed broker test's report.

Run only these tests with ``pytest -m broker``; deselect them with ``-m "not broker"``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
BROKER_POM = TESTS_DIR / "broker" / "pom.xml"
JAVA_CONSUMER_DIR = TESTS_DIR / "java-consumer"

#: Time limits (seconds). The first run downloads ~45 MB of jars; later starts take a few seconds.
DOWNLOAD_TIMEOUT = 900
START_TIMEOUT = 90
STOP_TIMEOUT = 30


def kafka_version() -> str:
    """The Kafka version pinned in tests/support/broker/pom.xml (the single source of truth)."""
    match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", BROKER_POM.read_text())
    if not match:
        raise RuntimeError(f"no <kafka.version> in {BROKER_POM}")
    return match.group(1).strip()


def cache_root() -> Path:
    root = os.environ.get("KASSIGN_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "kassign"


def require_tool(name: str) -> str:
    """Path of ``name`` on PATH; a missing tool fails the test (broker tests are never skipped)."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"{name!r} is not on PATH: the broker tests need Java 17+ and Maven "
            f"(e.g. apt-get install openjdk-17-jdk-headless maven)",
            pytrace=False,
        )
    return path


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float) -> Iterator[None]:
    """An exclusive lock between pytest sessions sharing the cache (bounded wait)."""
    # POSIX only, as the broker is: imported here so that the suite's other tests collect on Windows
    # (conftest.py loads this module as a plugin; scripts/foreign_tests.py runs them under wine).
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"timed out waiting for the cache lock {path}") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run_maven(args: list[str], cwd: Path, log_path: Path, timeout: float) -> None:
    mvn = require_tool("mvn")
    cmd = [mvn, "-B", "-q", *args]
    with open(log_path, "w") as log:
        proc = subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False)
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"{' '.join(cmd)} failed with exit code {proc.returncode} (log {log_path}):\n{tail}")


def broker_libs() -> Path:
    """Directory of the broker's runtime jars, downloaded by Maven on first use."""
    require_tool("java")
    version = kafka_version()
    pom_digest = hashlib.sha256(BROKER_POM.read_bytes()).hexdigest()[:12]
    home = cache_root() / f"kafka-{version}"
    libs = home / f"libs-{pom_digest}"
    marker = libs / ".complete"
    if marker.exists():
        return libs
    with _file_lock(home / ".lock", DOWNLOAD_TIMEOUT):
        if marker.exists():
            return libs
        staging = home / f"staging-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        started = time.monotonic()
        _run_maven(
            [
                "-f",
                str(BROKER_POM),
                "dependency:copy-dependencies",
                "-DincludeScope=runtime",
                f"-DoutputDirectory={staging}",
            ],
            cwd=BROKER_POM.parent,
            log_path=home / "maven-download.log",
            timeout=DOWNLOAD_TIMEOUT,
        )
        if not any(p.name.startswith("kafka_2.13-") for p in staging.glob("*.jar")):
            raise RuntimeError(f"Maven did not produce the kafka_2.13 jar in {staging}")
        (staging / ".complete").write_text(f"downloaded in {time.monotonic() - started:.1f}s\n")
        shutil.rmtree(libs, ignore_errors=True)
        staging.rename(libs)
        sys.stderr.write(
            f"\n[kafka_broker] downloaded Kafka {version} jars into {libs} in {time.monotonic() - started:.1f}s\n"
        )
    return libs


def java_consumer_classpath() -> str:
    """Build tests/support/java-consumer once (keyed by a hash of its sources) and return its classpath."""
    require_tool("java")
    digest = hashlib.sha256()
    for path in sorted(JAVA_CONSUMER_DIR.rglob("*")):
        if path.is_file() and "target" not in path.relative_to(JAVA_CONSUMER_DIR).parts:
            digest.update(str(path.relative_to(JAVA_CONSUMER_DIR)).encode())
            digest.update(path.read_bytes())
    build = cache_root() / f"java-consumer-{digest.hexdigest()[:12]}"
    marker = build / ".complete"
    if not marker.exists():
        with _file_lock(cache_root() / "java-consumer.lock", DOWNLOAD_TIMEOUT):
            if not marker.exists():
                shutil.rmtree(build, ignore_errors=True)
                build.mkdir(parents=True)
                _run_maven(
                    [
                        "-f",
                        str(JAVA_CONSUMER_DIR / "pom.xml"),
                        f"-Dkassign.build.dir={build}",
                        "package",
                        "dependency:copy-dependencies",
                        "-DincludeScope=runtime",
                        f"-DoutputDirectory={build / 'libs'}",
                    ],
                    cwd=JAVA_CONSUMER_DIR,
                    log_path=cache_root() / "java-consumer-build.log",
                    timeout=DOWNLOAD_TIMEOUT,
                )
                marker.write_text("ok\n")
    return os.pathsep.join([str(build / "classes"), str(build / "libs" / "*")])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


#: Broker settings tuned for fast, small, single-node tests.
BROKER_SETTINGS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "num.partitions": "1",
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "log.segment.bytes": str(64 * 1024 * 1024),
    "log.retention.check.interval.ms": "3600000",
}

JVM_OPTIONS = ["-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]

LOG4J2_CONFIG = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.request.name = kafka.request.logger
logger.request.level = WARN
"""


class KafkaBroker:
    """A running single-node broker: ``bootstrap``, ``log_dir`` and test helpers."""

    def __init__(self, libs: Path, work_dir: Path) -> None:
        self.libs = libs
        self.work_dir = work_dir
        self.port = free_port()
        self.controller_port = free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.log_dir = work_dir / "logs"
        self.data_dir = work_dir / "data"
        self.server_log = self.log_dir / "server.log"
        self.stdout_log = self.log_dir / "stdout.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_in: float | None = None
        self._admin: Any = None
        self._names = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def _java(self, main: str, *args: str) -> list[str]:
        java = require_tool("java")
        return [
            java,
            *JVM_OPTIONS,
            f"-Dlog4j2.configurationFile={self.work_dir / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.log_dir}",
            "-cp",
            str(self.libs / "*"),
            main,
            *args,
        ]

    def start(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        settings = dict(BROKER_SETTINGS)
        settings.update(
            {
                "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
                "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "log.dirs": str(self.data_dir),
            }
        )
        settings.update(self.extra_settings())
        props = self.work_dir / "server.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        (self.work_dir / "log4j2.properties").write_text(LOG4J2_CONFIG.format(log=self.server_log))
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        started = time.monotonic()
        with open(self.log_dir / "format.log", "w") as log:
            # group.version=1 enables the KIP-848 consumer group protocol (the 4.4 default; explicit
            # here because tests/broker/test_broker_server_assignors.py relies on it). The cluster id is
            # passed as --cluster-id=ID: a random id may start with "-", which argparse would take
            # for an option.
            fmt = subprocess.run(
                self._java(
                    "kafka.tools.StorageTool",
                    "format",
                    f"--cluster-id={cluster_id}",
                    "-c",
                    str(props),
                    "--feature",
                    "group.version=1",
                    *self.extra_format_args(),
                ),
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=120,
                check=False,
            )
        if fmt.returncode != 0:
            raise RuntimeError(f"StorageTool format failed:\n{(self.log_dir / 'format.log').read_text()[-4000:]}")
        out = open(self.stdout_log, "wb")
        self.proc = subprocess.Popen(
            self._java("kafka.Kafka", str(props)),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        out.close()
        deadline = time.monotonic() + START_TIMEOUT
        while not _port_open(self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"the broker exited with code {self.proc.returncode}; see {self.log_dir}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"the broker did not open {self.bootstrap} in {START_TIMEOUT}s; see {self.log_dir}")
            time.sleep(0.1)
        self._wait_ready(deadline)
        self.started_in = time.monotonic() - started

    def _wait_ready(self, deadline: float) -> None:
        """The broker answers metadata requests and can create a topic (so the controller is up)."""
        last: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                self.admin().list_topics()
                return
            except Exception as exc:  # the admin client raises several error types while the broker boots
                last = exc
                self._close_admin()
                time.sleep(0.2)
        raise TimeoutError(f"the broker at {self.bootstrap} did not become ready: {last!r}; see {self.log_dir}")

    def stop(self) -> None:
        self._close_admin()
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def extra_settings(self) -> dict[str, str]:
        """More broker settings, applied over the defaults (a subclass adds listeners here)."""
        return {}

    def extra_format_args(self) -> list[str]:
        """More ``StorageTool format`` arguments (e.g. ``--add-scram`` credentials)."""
        return []

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- helpers -----------------------------------------------------------------------------
    def admin(self) -> Any:
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = KafkaAdminClient(
                bootstrap_servers=self.bootstrap, client_id="kassign-test-admin", request_timeout_ms=15000
            )
        return self._admin

    def _close_admin(self) -> None:
        if self._admin is not None:
            with contextlib.suppress(Exception):
                self._admin.close()
            self._admin = None

    def unique_name(self, prefix: str) -> str:
        """A name unique within the session (topics and group ids)."""
        self._names += 1
        return f"{prefix}-{os.getpid()}-{self._names}"

    def create_topic(self, name: str, partitions: int = 1, timeout: float = 30.0) -> str:
        """Create ``name`` with ``partitions`` partitions and wait until every partition has a leader."""
        from kafka.admin import NewTopic

        self.admin().create_topics([NewTopic(name, partitions, 1)], timeout_ms=int(timeout * 1000))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            described = self.admin().describe_topics([name])
            parts = described[0].get("partitions", []) if described else []
            if len(parts) == partitions and all(
                p.get("leader_id", -1) >= 0 and p.get("error_code", 0) == 0 for p in parts
            ):
                return name
            time.sleep(0.1)
        raise TimeoutError(f"topic {name} did not get {partitions} partitions with leaders in {timeout}s")

    def create_topics(self, names: list[str], partitions: int) -> list[str]:
        return [self.create_topic(n, partitions) for n in names]

    def produce_numbered(self, topics: list[str], count: int, timeout: float = 180.0) -> dict[str, int]:
        """Produce values b"0" .. b"count-1" spread round-robin over ``topics`` and their partitions.

        Returns the number of messages written per topic. Message ``i`` goes to
        ``topics[i % len(topics)]``, partition ``(i // len(topics)) % P``.
        """
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap,
            linger_ms=20,
            batch_size=256 * 1024,
            acks=1,
            max_block_ms=30000,
            compression_type=None,
        )
        try:
            counts = dict.fromkeys(topics, 0)
            parts = {t: len(producer.partitions_for(t)) for t in topics}
            futures = []
            for i in range(count):
                topic = topics[i % len(topics)]
                partition = (i // len(topics)) % parts[topic]
                futures.append(producer.send(topic, value=str(i).encode(), partition=partition))
                counts[topic] += 1
            producer.flush(timeout=timeout)
            for f in futures[-1000:]:
                f.get(timeout=timeout)
            for f in futures:
                if f.failed():
                    raise RuntimeError(f"produce failed: {f.exception!r}")
            return counts
        finally:
            producer.close(timeout=10)

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets, read with the admin client (OffsetFetch)."""
        offsets = self.admin().list_group_offsets({group: None})[group]
        return {(tp.topic, tp.partition): om.offset for tp, om in offsets.items() if om.offset >= 0}

    def end_offsets(self, topics: list[str]) -> dict[tuple[str, int], int]:
        from kafka import KafkaConsumer, TopicPartition

        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        try:
            tps = [TopicPartition(t, p) for t in topics for p in sorted(consumer.partitions_for_topic(t) or ())]
            return {(tp.topic, tp.partition): off for tp, off in consumer.end_offsets(tps).items()}
        finally:
            consumer.close()

    def describe_group(self, group_id: str) -> Any:
        return self.admin().describe_consumer_groups([group_id])[0]

    def tail_log(self, chars: int = 3000) -> str:
        try:
            return self.server_log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


_BROKER: KafkaBroker | None = None


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One real broker for the whole test session."""
    global _BROKER
    libs = broker_libs()
    broker = KafkaBroker(libs, tmp_path_factory.mktemp("kafka-broker"))
    sys.stderr.write(f"\n[kafka_broker] starting Kafka {kafka_version()}; logs in {broker.log_dir}\n")
    try:
        broker.start()
    except BaseException:
        broker.stop()
        raise
    sys.stderr.write(f"[kafka_broker] {broker.bootstrap} ready in {broker.started_in:.1f}s\n")
    _BROKER = broker
    try:
        yield broker
    finally:
        _BROKER = None
        broker.stop()


#: The shared workload of the churn tests: 2 topics x 24 partitions, 100k numbered messages.
NUMBERED_TOPICS = 2
NUMBERED_PARTITIONS = 24
NUMBERED_MESSAGES = 100_000


class NumberedTopics:
    def __init__(self, topics: list[str], partitions: int, count: int) -> None:
        self.topics = topics
        self.count = count
        self.partitions = {(t, p) for t in topics for p in range(partitions)}


@pytest.fixture(scope="session")
def numbered_topics(kafka_broker: KafkaBroker) -> NumberedTopics:
    """2 topics x 24 partitions holding messages b"0" .. b"99999" (produced once per session)."""
    topics = [kafka_broker.unique_name(f"numbered-{c}") for c in "ab"[:NUMBERED_TOPICS]]
    kafka_broker.create_topics(topics, NUMBERED_PARTITIONS)
    started = time.monotonic()
    counts = kafka_broker.produce_numbered(topics, NUMBERED_MESSAGES)
    sys.stderr.write(f"[kafka_broker] produced {sum(counts.values())} messages in {time.monotonic() - started:.1f}s\n")
    ends = kafka_broker.end_offsets(topics)
    assert sum(ends.values()) == NUMBERED_MESSAGES, ends
    return NumberedTopics(topics, NUMBERED_PARTITIONS, NUMBERED_MESSAGES)


@pytest.fixture(scope="session")
def java_consumer() -> str:
    """Classpath of the Java consumer in tests/support/java-consumer (built once, cached)."""
    return java_consumer_classpath()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and "kafka_broker" in getattr(item, "fixturenames", ()) and _BROKER is not None:
        report.sections.append(
            (
                "kafka broker",
                f"broker {_BROKER.bootstrap} alive={_BROKER.alive()} logs kept in {_BROKER.log_dir}\n"
                f"--- tail of {_BROKER.server_log} ---\n{_BROKER.tail_log()}",
            )
        )


# ------------------------------------------------------------------------------------------------
# Consumer-group runs: worker processes (tests/support/consumer_worker.py, tests/support/java-consumer) and their
# JSON-lines event logs.

WORKER_SCRIPT = TESTS_DIR / "consumer_worker.py"

#: ``KASSIGN_PLAIN_POLL=1``: kafka-python workers poll without the lost-join work-around
#: (tests/support/kafka_python_join.py). Only for reproducing the defect (RELIABILITY.md); never in CI.
PLAIN_POLL = os.environ.get("KASSIGN_PLAIN_POLL") == "1"


class Worker:
    """One consumer process and its event log."""

    def __init__(self, name: str, proc: subprocess.Popen[bytes], events: Path, kind: str) -> None:
        self.name = name
        self.proc = proc
        self.events_path = events
        self.kind = kind
        self.started = time.time()
        self.killed_at: float | None = None
        self.closed_at: float | None = None
        self._offset = 0
        self._events: list[dict[str, Any]] = []

    @property
    def live(self) -> bool:
        return self.killed_at is None and self.closed_at is None and self.proc.poll() is None

    def events(self) -> list[dict[str, Any]]:
        """All complete event lines so far (read incrementally)."""
        import json

        try:
            with open(self.events_path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            return self._events
        end = data.rfind(b"\n") + 1
        for line in data[:end].splitlines():
            if line.strip():
                self._events.append(json.loads(line))
        self._offset += end
        return self._events

    def last(self, ev: str, since: float = 0.0) -> dict[str, Any] | None:
        for e in reversed(self.events()):
            if e["ev"] == ev and e["t"] >= since:
                return e
        return None


class GroupRun:
    """A consumer group made of worker processes, with churn operations and checks.

    Every process is bounded (``max_runtime``) and stopped by :meth:`stop_all` (SIGTERM, then SIGKILL).
    """

    def __init__(
        self,
        broker: KafkaBroker,
        group: str,
        topics: list[str],
        work_dir: Path,
        session_timeout_ms: int = 6000,
        max_runtime: float = 400.0,
    ) -> None:
        self.broker = broker
        self.group = group
        self.topics = topics
        self.work_dir = work_dir
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.session_timeout_ms = session_timeout_ms
        self.max_runtime = max_runtime
        self.workers: dict[str, Worker] = {}

    def _spawn(self, name: str, cmd: list[str], kind: str) -> Worker:
        if name in self.workers:
            raise ValueError(f"worker {name} exists")
        events = self.work_dir / f"{name}.jsonl"
        stderr = open(self.work_dir / f"{name}.stderr", "wb")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            cmd, stdout=stderr, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )
        stderr.close()
        worker = Worker(name, proc, events, kind)
        self.workers[name] = worker
        return worker

    def start_python(
        self,
        name: str,
        strategy: str,
        client: str = "kafka-python",
        *,
        rate: float = 0.0,
        builtin: bool = False,
        priority: int | None = None,
        group_instance_id: str | None = None,
        extra: tuple[str, ...] = (),
    ) -> Worker:
        """A tests/support/consumer_worker.py process. ``strategy``: assignor names in preference order,
        comma-separated, each optionally ``builtin:NAME`` (the client's own) or ``kassign:NAME``."""
        cmd = [
            sys.executable,
            str(WORKER_SCRIPT),
            "--bootstrap",
            self.broker.bootstrap,
            "--group",
            self.group,
            "--topics",
            ",".join(self.topics),
            "--client",
            client,
            "--strategy",
            strategy,
            "--name",
            name,
            "--events",
            str(self.work_dir / f"{name}.jsonl"),
            "--session-timeout-ms",
            str(self.session_timeout_ms),
            "--rate",
            str(rate),
            "--max-runtime",
            str(self.max_runtime),
            *extra,
        ]
        if builtin:
            cmd.append("--builtin")
        if priority is not None:
            cmd += ["--priority", str(priority)]
        if group_instance_id is not None:
            cmd += ["--group-instance-id", group_instance_id]
        if PLAIN_POLL and client == "kafka-python":
            cmd.append("--plain-poll")
        return self._spawn(name, cmd, client)

    def start_java(
        self,
        name: str,
        classpath: str,
        *,
        rate: float = 0.0,
        assignors: str = "cooperative-sticky",
        group_instance_id: str | None = None,
        topics: list[str] | None = None,
        extra: tuple[str, ...] = (),
    ) -> Worker:
        """A tests/support/java-consumer process with Apache Kafka's own ``assignors`` (preference order);
        ``extra`` are more JavaConsumer arguments."""
        java = require_tool("java")
        cmd = [
            java,
            "-Xmx160m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classpath,
            "kassign.tests.JavaConsumer",
            "--bootstrap",
            self.broker.bootstrap,
            "--group",
            self.group,
            "--topics",
            ",".join(topics or self.topics),
            "--name",
            name,
            "--events",
            str(self.work_dir / f"{name}.jsonl"),
            "--session-timeout-ms",
            str(self.session_timeout_ms),
            "--rate",
            str(rate),
            "--max-runtime",
            str(self.max_runtime),
            "--assignors",
            assignors,
            *extra,
        ]
        if group_instance_id is not None:
            cmd += ["--group-instance-id", group_instance_id]
        return self._spawn(name, cmd, "java")

    def kill(self, name: str) -> float:
        """SIGKILL: a crash. Returns the time of the kill."""
        w = self.workers[name]
        w.killed_at = time.time()
        w.proc.kill()
        w.proc.wait(10)
        return w.killed_at

    def close(self, name: str, timeout: float = 40.0) -> float:
        """SIGTERM: graceful close (the worker leaves the group). Returns when the process exited."""
        w = self.workers[name]
        w.proc.send_signal(signal.SIGTERM)
        try:
            w.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            w.proc.kill()
            w.proc.wait(10)
            raise AssertionError(f"worker {name} did not close within {timeout}s") from None
        w.closed_at = time.time()
        return w.closed_at

    def stop_all(self) -> None:
        for w in self.workers.values():
            if w.proc.poll() is None:
                w.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 40
        for w in self.workers.values():
            try:
                w.proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait(10)
            if w.killed_at is None and w.closed_at is None:
                w.closed_at = time.time()

    def live(self) -> list[Worker]:
        return [w for w in self.workers.values() if w.live]

    def check_alive(self) -> None:
        for w in self.workers.values():
            if w.killed_at is None and w.closed_at is None and w.proc.poll() is not None:
                err = (self.work_dir / f"{w.name}.stderr").read_text(errors="replace")[-3000:]
                raise AssertionError(f"worker {w.name} exited unexpectedly with {w.proc.returncode}:\n{err}")

    def snapshot(self, since: float) -> dict[str, tuple[int, frozenset[tuple[str, int]]]] | None:
        """Each live worker's latest tick after ``since``: {name: (generation, partitions)}, or None
        when some live worker has not ticked since."""
        out = {}
        for w in self.live():
            tick = w.last("tick", since)
            if tick is None:
                return None
            out[w.name] = (tick["gen"], frozenset((t, p) for t, p in tick["parts"]))
        return out

    def wait_stable(
        self, all_partitions: set[tuple[str, int]], timeout: float = 90.0, settle: float = 1.0
    ) -> dict[str, frozenset[tuple[str, int]]]:
        """Wait until every live worker reports the same generation and together they own every
        partition exactly once, unchanged for ``settle`` seconds. Returns {worker: partitions}."""
        deadline = time.monotonic() + timeout
        since = time.time()
        stable_since: float | None = None
        stable_view: Any = None
        last: Any = None
        while time.monotonic() < deadline:
            self.check_alive()
            snap = self.snapshot(since)
            ok = False
            if snap:
                gens = {g for g, _ in snap.values()}
                owned = [tp for _, parts in snap.values() for tp in parts]
                ok = len(gens) == 1 and min(gens) > 0 and len(owned) == len(set(owned)) and set(owned) == all_partitions
            last = snap
            if ok:
                if stable_view != snap:
                    stable_view, stable_since = snap, time.monotonic()
                elif time.monotonic() - stable_since >= settle:
                    return {name: parts for name, (_, parts) in snap.items()}
            else:
                stable_view = stable_since = None
            time.sleep(0.2)
        summary = {k: (g, len(p)) for k, (g, p) in (last or {}).items()}
        raise AssertionError(f"group {self.group} not stable after {timeout}s: {summary}; logs in {self.work_dir}")

    def consumed(self) -> set[int]:
        values: set[int] = set()
        for w in self.workers.values():
            for e in w.events():
                if e["ev"] == "records":
                    values.update(e["values"])
        return values

    def wait_consumed(self, count: int, timeout: float = 120.0) -> set[int]:
        deadline = time.monotonic() + timeout
        while True:
            got = self.consumed()
            if len(got) >= count or time.monotonic() > deadline:
                return got
            self.check_alive()
            time.sleep(0.5)

    def leaders(self) -> list[tuple[float, str]]:
        """(time, worker) of every group assignment run, in time order."""
        return sorted((e["t"], w.name) for w in self.workers.values() for e in w.events() if e["ev"] == "led")

    def ownership_intervals(self, end: float) -> dict[tuple[str, int], list[tuple[float, float, str]]]:
        """Per partition, the [start, end) intervals during which each worker owned it, from the
        listener callbacks; ownership ends at revoke/lost, at ``released`` (a graceful close stops
        processing before leaving the group), at a SIGKILL, or at ``end``."""
        out: dict[tuple[str, int], list[tuple[float, float, str]]] = {}
        for w in self.workers.values():
            open_since: dict[tuple[str, int], float] = {}
            stop = w.killed_at if w.killed_at is not None else end
            for e in w.events():
                parts = [(t, p) for t, p in e.get("parts", ())]
                if e["ev"] == "assigned":
                    for tp in parts:
                        open_since.setdefault(tp, e["t"])
                elif e["ev"] in ("revoked", "lost", "released"):
                    for tp in parts:
                        if tp in open_since:
                            out.setdefault(tp, []).append((open_since.pop(tp), e["t"], w.name))
            for tp, t0 in open_since.items():
                out.setdefault(tp, []).append((t0, stop, w.name))
        return out


class NumberedProducer:
    """Keeps producing numbered values while a test changes the group (a background thread).

    Value ``i`` goes to ``topics[i % len(topics)]``, partition ``(i // len(topics)) % partitions``, like
    :meth:`KafkaBroker.produce_numbered`; values start at ``first``. :meth:`stop` flushes and returns
    the next unused value (so ``range(stop())`` is everything produced, with the values before
    ``first``)."""

    def __init__(
        self, broker: KafkaBroker, topics: list[str], partitions: int, first: int, rate: float = 100.0
    ) -> None:
        import threading

        from kafka import KafkaProducer

        self.topics = topics
        self.partitions = partitions
        self.next = first
        self.rate = rate
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, acks=1, max_block_ms=30000)
        self._futures: list[Any] = []
        self._thread = threading.Thread(target=self._run, name="numbered-producer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            started, first = time.monotonic(), self.next
            while not self._stop.is_set():
                due = first + int((time.monotonic() - started) * self.rate)
                while self.next < due:
                    i = self.next
                    topic = self.topics[i % len(self.topics)]
                    part = (i // len(self.topics)) % self.partitions
                    self._futures.append(self._producer.send(topic, value=str(i).encode(), partition=part))
                    self.next += 1
                self._stop.wait(0.05)
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def stop(self, timeout: float = 60.0) -> int:
        self._stop.set()
        self._thread.join(timeout)
        try:
            self._producer.flush(timeout=timeout)
            for f in self._futures:
                f.get(timeout=timeout)
        finally:
            self._producer.close(timeout=10)
        if self.error is not None:
            raise AssertionError(f"the background producer failed: {self.error!r}")
        return self.next


def overlapping_ownership(
    intervals: dict[tuple[str, int], list[tuple[float, float, str]]],
) -> list[tuple[tuple[str, int], tuple[float, float, str], tuple[float, float, str]]]:
    """Pairs of intervals in which two different workers owned the same partition at once."""
    bad = []
    for tp, ivs in intervals.items():
        ivs = sorted(ivs)
        for i, a in enumerate(ivs):
            for b in ivs[i + 1 :]:
                if b[0] >= a[1]:
                    break
                if a[2] != b[2]:
                    bad.append((tp, a, b))
    return bad
