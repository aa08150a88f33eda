"""``kassign snapshot --command-config`` against a real broker's secured listeners
(tests/support/secure_broker.py: SASL_SSL with SCRAM-SHA-512, SASL_PLAINTEXT with PLAIN, mutual TLS, and a
listener whose certificate names another host), with live groups of both protocols, then
``kassign fleet`` on the snapshots; every failure exits 2 with one line; no password anywhere.

One broker process serves the module; the groups join over its PLAINTEXT listener.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from support.kafka_broker import broker_libs, free_port
from support.secure_broker import PLAIN_USER, SCRAM_USER, SecureKafkaBroker
from support.spark_env import fleet_cli

pytestmark = pytest.mark.broker

PARTITIONS = 4
TIMEOUT = 10.0


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafkaBroker]:
    broker = SecureKafkaBroker(broker_libs(), tmp_path_factory.mktemp("secure-broker"))
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()


class _Classic:
    """A kafka-python consumer (classic protocol, range) that keeps heartbeating."""

    def __init__(self, bootstrap: str, group: str, topic: str, instance: str | None = None) -> None:
        from kafka import KafkaConsumer

        self.consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            client_id="classic-1",
            group_instance_id=instance,
        )
        self.assigned: set[tuple[str, int]] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            self.consumer.poll(timeout_ms=100)
            a = self.consumer.assignment()
            if a:
                self.consumer.pause(*a)
            self.assigned = {(tp.topic, tp.partition) for tp in a}

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        self.consumer.close()


class _Modern:
    """A confluent-kafka consumer on the KIP-848 consumer protocol."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        from confluent_kafka import Consumer

        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": "modern-1",
                "group.protocol": "consumer",
                "enable.auto.commit": False,
            }
        )
        self.consumer.subscribe([topic])
        self.assigned: set[tuple[str, int]] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            self.consumer.poll(0.1)
            self.assigned = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
        self.consumer.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


class Groups:
    def __init__(self, topic: str, classic: str, modern: str, pair: str) -> None:
        self.topic, self.classic, self.modern, self.pair = topic, classic, modern, pair


@pytest.fixture(scope="module")
def live_groups(secure_broker: SecureKafkaBroker) -> Iterator[Groups]:
    b = secure_broker
    topic = b.create_topic(b.unique_name("secure-t"), partitions=PARTITIONS)
    b.produce_numbered([topic], 40)
    names = ("secure-classic", "secure-modern", "secure-pair")
    g = Groups(topic, *(b.unique_name(n) for n in names))
    members: list[Any] = [_Classic(b.bootstrap, g.classic, topic), _Modern(b.bootstrap, g.modern, topic)]
    pair = [_Classic(b.bootstrap, g.pair, topic), _Classic(b.bootstrap, g.pair, topic, instance="static-1")]
    try:
        want = {(topic, p) for p in range(PARTITIONS)}
        deadline = time.monotonic() + 90
        while not (
            all(m.assigned == want for m in members)
            and all(len(m.assigned) == PARTITIONS // 2 for m in pair)
            and set().union(*(m.assigned for m in pair)) == want
        ):
            assert time.monotonic() < deadline, [m.assigned for m in members + pair]
            time.sleep(0.3)
        yield g
    finally:
        for m in members + pair:
            m.close()


def _write_configs(b: SecureKafkaBroker, d: Path) -> dict[str, Path]:
    """The client config files a user would write, one per listener (PEM and PKCS12 stores)."""
    pki = b.pki
    d.mkdir(parents=True, exist_ok=True)
    files = {
        "SASL_SSL": (
            "# SCRAM over TLS, PEM trust store\n"
            "security.protocol=SASL_SSL\n"
            "sasl.mechanism=SCRAM-SHA-512\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
            f'    username="{SCRAM_USER}" password="{b.scram_password}";\n'
            "ssl.truststore.type=PEM\n"
            f"ssl.truststore.location={pki.ca_pem}\n"
        ),
        "SASL_PLAINTEXT": (
            "security.protocol=SASL_PLAINTEXT\n"
            "sasl.mechanism=PLAIN\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{PLAIN_USER}" password="{b.plain_password}";\n'
        ),
        "MTLS": (
            "# mutual TLS, PKCS12 trust and key stores\n"
            "security.protocol=SSL\n"
            "ssl.truststore.type=PKCS12\n"
            f"ssl.truststore.location={pki.ca_p12}\n"
            f"ssl.truststore.password={pki.truststore_password}\n"
            "ssl.keystore.type=PKCS12\n"
            f"ssl.keystore.location={pki.client_p12}\n"
            f"ssl.keystore.password={pki.keystore_password}\n"
            f"ssl.key.password={pki.keystore_password}\n"
        ),
        "MTLS_PEM": (
            "# mutual TLS, PEM key store with an encrypted key\n"
            "security.protocol=SSL\n"
            "ssl.truststore.type=PEM\n"
            f"ssl.truststore.location={pki.ca_pem}\n"
            "ssl.keystore.type=PEM\n"
            f"ssl.keystore.location={pki.client_pem}\n"
            f"ssl.key.password={pki.key_password}\n"
        ),
    }
    out = {}
    for name, text in files.items():
        out[name] = d / f"{name.lower()}.properties"
        out[name].write_text(text)
    return out


@pytest.fixture(scope="module")
def configs(secure_broker: SecureKafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _write_configs(secure_broker, tmp_path_factory.mktemp("client-configs"))


def snapshot_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kassign", "snapshot", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _assert_no_secret(b: SecureKafkaBroker, texts: list[str], dirs: list[Path]) -> None:
    """No password (nor the SCRAM / PLAIN ones) in any output or in any file under ``dirs``."""
    secrets = [s.encode() for s in b.secrets()]
    for t in texts:
        for s in secrets:
            assert s not in t.encode(), "a password appears in the output"
    n = 0
    for d in dirs:
        for root, _, names in os.walk(d):
            for name in names:
                data = (Path(root) / name).read_bytes()
                n += 1
                for s in secrets:
                    assert s not in data, f"a password appears in {Path(root) / name}"
    assert not dirs or n > 0


LISTENER_CONFIG = {"SASL_SSL": "SASL_SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "MTLS": "MTLS", "MTLS_PEM": "MTLS"}


class Snap:
    def __init__(self, out: Path, proc: subprocess.CompletedProcess[str]) -> None:
        self.out, self.proc = out, proc


@pytest.fixture(scope="module")
def snapshots(
    secure_broker: SecureKafkaBroker,
    live_groups: Groups,
    configs: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Snap]:
    """``kassign snapshot --command-config`` over each secured listener, as a user runs it."""
    d = tmp_path_factory.mktemp("secure-snapshots")
    out = {}
    for config, listener in LISTENER_CONFIG.items():
        path = d / config.lower()
        proc = snapshot_cli(
            "--bootstrap-servers",
            secure_broker.address(listener),
            "--command-config",
            str(configs[config]),
            "--out",
            str(path),
            "--cluster",
            f"secure-{config.lower()}",
            "--group",
            live_groups.classic,
            "--group",
            live_groups.modern,
            "--timeout",
            str(TIMEOUT),
        )
        out[config] = Snap(path, proc)
    return out


@pytest.mark.parametrize("config", list(LISTENER_CONFIG))
def test_snapshot_over_a_secured_listener(
    secure_broker: SecureKafkaBroker, live_groups: Groups, snapshots: dict[str, Snap], config: str
) -> None:
    import json

    b, g = secure_broker, live_groups
    r, out = snapshots[config].proc, snapshots[config].out
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"wrote {out}" in r.stdout
    groups = {row["group_id"]: row for row in pq.read_table(out / "groups.parquet").to_pylist()}
    assert groups[g.classic]["group_protocol"] == "classic" and groups[g.classic]["protocol"] == "range"
    assert groups[g.modern]["group_protocol"] == "consumer"
    members = pq.read_table(out / "members.parquet").to_pylist()
    want = [{"topic": g.topic, "partition": p} for p in range(PARTITIONS)]
    by_group = {row["group_id"]: row for row in members}
    assert len(members) == 2 and set(by_group) == {g.classic, g.modern}
    assert by_group[g.classic]["owned_partitions"] == want and by_group[g.classic]["client_id"] == "classic-1"
    assert by_group[g.modern]["owned_partitions"] == want and by_group[g.modern]["client_id"] == "modern-1"
    parts = pq.read_table(out / "partitions.parquet").to_pylist()
    assert sum(p["end_offset"] for p in parts if p["topic"] == g.topic) == 40
    source = json.loads((out / "snapshot.json").read_text())["source"]
    assert source["bootstrap_servers"] == b.address(LISTENER_CONFIG[config])
    assert source["security_protocol"] == ("SSL" if config.startswith("MTLS") else config)


@pytest.fixture(scope="module")
def fleet_run(snapshots: dict[str, Snap], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``kassign fleet`` once, on the SASL_SSL and the mTLS snapshots together (one Spark start)."""
    import pyarrow as pa

    from kassign.fleet.snapshot import TABLES, write

    d = tmp_path_factory.mktemp("secure-fleet")
    for config in ("SASL_SSL", "MTLS"):
        assert snapshots[config].proc.returncode == 0, snapshots[config].proc.stderr[-3000:]
    tables = {
        name: pa.concat_tables([pq.read_table(snapshots[c].out / f"{name}.parquet") for c in ("SASL_SSL", "MTLS")])
        for name in TABLES
    }
    both = d / "snap"
    write(tables, str(both), source={"kind": "test", "of": ["SASL_SSL", "MTLS"]})
    out = d / "report"
    proc = fleet_cli(["--snapshot", str(both), "--strategies", "range,cooperative-sticky", "--quiet"], out)
    return Snap(out, proc)


def test_fleet_on_the_secured_snapshots(live_groups: Groups, fleet_run: Snap) -> None:
    g = live_groups
    assert fleet_run.proc.returncode == 0, fleet_run.proc.stderr[-3000:]
    results = pq.read_table(fleet_run.out / "results.parquet").to_pylist()
    assert {(row["cluster"], row["group_id"], row["strategy"]) for row in results} == {
        (c, grp, s)
        for c in ("secure-sasl_ssl", "secure-mtls")
        for grp in (g.classic, g.modern)
        for s in ("range", "cooperative-sticky")
    }
    assert all(row["status"] == "ok" for row in results), [row["error"] for row in results]


def test_no_password_in_any_output_or_file(
    secure_broker: SecureKafkaBroker, snapshots: dict[str, Snap], fleet_run: Snap
) -> None:
    texts = [t for s in (*snapshots.values(), fleet_run) for t in (s.proc.stdout, s.proc.stderr)]
    _assert_no_secret(secure_broker, texts, [s.out for s in snapshots.values()] + [fleet_run.out])


def _old_describe(bootstrap: str, group_ids: list[str]) -> dict[str, Any]:
    """The collector's previous DescribeGroups path, kept as the oracle: kafka-python's admin client
    with its private ``_describe_groups_process_response`` overridden to keep the raw bytes."""
    import kafka.errors as Errors
    from kafka import KafkaAdminClient

    from kassign.fleet.collect import _as_bytes

    class _RawMetadataAdmin(KafkaAdminClient):  # type: ignore[misc]
        def _describe_groups_process_response(self, response: Any) -> dict[str, Any]:
            results = {}
            for group in response.groups:
                d = group.to_dict()
                for md, raw in zip(d.get("members", []), group.members):
                    md["member_metadata"] = _as_bytes(raw.member_metadata)
                    md["member_assignment"] = _as_bytes(raw.member_assignment)
                code = d.pop("error_code")
                msg = d.pop("error_message", "")
                d["error"] = str(Errors.for_code(code)(msg)) if code else None
                results[group.group_id] = d
            return results

    admin = _RawMetadataAdmin(bootstrap_servers=bootstrap)
    try:
        return dict(admin.describe_groups(group_ids))
    finally:
        admin.close()


def test_describe_groups_equals_the_previous_implementation(
    secure_broker: SecureKafkaBroker, live_groups: Groups
) -> None:
    """The public-route DescribeGroups gives the member rows the private-override one gave."""
    from kassign.fleet.collect import _member_row, collect

    b, g = secure_broker, live_groups
    ids = [g.classic, g.pair]
    tables = collect(b.bootstrap, cluster="c", groups=ids, progress=False)
    old = _old_describe(b.bootstrap, ids)
    expected_groups = {gid: (d["group_state"], d["protocol_type"], d["protocol_data"]) for gid, d in old.items()}
    got_groups = {r["group_id"]: (r["state"], r["protocol_type"], r["protocol"]) for r in tables["groups"].to_pylist()}
    assert got_groups == expected_groups
    expected = sorted(
        (_member_row("c", gid, d["protocol_data"], m) for gid, d in old.items() for m in d["members"]),
        key=lambda r: r["member_id"],
    )
    got = sorted(tables["members"].to_pylist(), key=lambda r: r["member_id"])
    assert got == expected and len(got) == 3
    assert {r["group_instance_id"] for r in got if r["group_id"] == g.pair} == {None, "static-1"}


def _failures(b: SecureKafkaBroker, configs: dict[str, Path], d: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (arguments, a phrase the one error line must hold)."""
    not_a_file = d / "a-directory"
    not_a_file.mkdir(exist_ok=True)
    jks = d / "keystore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + bytes(60))  # what keytool writes first in a JKS store
    return {
        "wrong password": (
            [
                "--bootstrap-servers",
                b.address("SASL_SSL"),
                "--command-config",
                str(configs["SASL_SSL"]),
                "-X",
                "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{SCRAM_USER}" password="not-{b.scram_password}";',
            ],
            f"authentication failed (SASL SCRAM-SHA-512 as user '{SCRAM_USER}')",
        ),
        "untrusted certificate": (
            [
                "--bootstrap-servers",
                b.address("SASL_SSL"),
                "--command-config",
                str(configs["SASL_SSL"]),
                "-X",
                f"ssl.truststore.location={b.pki.rogue_ca_pem}",
            ],
            "certificate is not trusted",
        ),
        "host name mismatch": (
            ["--bootstrap-servers", b.address("BADNAME"), "--command-config", str(configs["MTLS"])],
            "does not match the host name",
        ),
        "no client certificate": (
            [
                "--bootstrap-servers",
                b.address("MTLS"),
                "--command-config",
                str(configs["SASL_SSL"]),
                "-X",
                "security.protocol=SSL",
            ],
            "requires a TLS client certificate",
        ),
        "unreachable": (
            ["--bootstrap-servers", f"127.0.0.1:{free_port()}", "--command-config", str(configs["SASL_SSL"])],
            "cannot reach any bootstrap server",
        ),
        "missing config": (
            ["--bootstrap-servers", b.address("SASL_SSL"), "--command-config", str(d / "missing.properties")],
            "missing.properties: no such file",
        ),
        "unreadable config": (
            ["--bootstrap-servers", b.address("SASL_SSL"), "--command-config", str(not_a_file)],
            "is a directory",
        ),
        "JKS store": (
            [
                "--bootstrap-servers",
                b.address("MTLS"),
                "--command-config",
                str(configs["MTLS"]),
                "-X",
                f"ssl.keystore.location={jks}",
            ],
            "JKS stores are not supported",
        ),
        "OAUTHBEARER": (
            [
                "--bootstrap-servers",
                b.address("SASL_SSL"),
                "--command-config",
                str(configs["SASL_SSL"]),
                "-X",
                "sasl.mechanism=OAUTHBEARER",
            ],
            "OAUTHBEARER is not supported",
        ),
    }


FAILURES = [
    "wrong password",
    "untrusted certificate",
    "host name mismatch",
    "no client certificate",
    "unreachable",
    "missing config",
    "unreadable config",
    "JKS store",
    "OAUTHBEARER",
]


@pytest.mark.parametrize("case", FAILURES)
def test_each_failure_is_one_line_and_exit_2(
    secure_broker: SecureKafkaBroker, configs: dict[str, Path], case: str, tmp_path: Path
) -> None:
    args, phrase = _failures(secure_broker, configs, tmp_path)[case]
    out = tmp_path / "snap"
    started = time.monotonic()
    r = snapshot_cli(*args, "--out", str(out), "--timeout", str(TIMEOUT))
    elapsed = time.monotonic() - started
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kassign snapshot: "), r.stderr[-3000:]
    assert phrase in lines[0], lines[0]
    assert "Traceback" not in r.stderr
    assert not out.exists()  # no snapshot, not even a partial one
    # bounded by --timeout (plus the interpreter's start), not by a client's own retry loop
    assert elapsed < TIMEOUT + 20, elapsed
    _assert_no_secret(secure_broker, [r.stdout, r.stderr], [])


def test_no_password_in_the_clients_debug_logs(
    secure_broker: SecureKafkaBroker, live_groups: Groups, configs: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """An application that logs everything (DEBUG) still gets no password from a collect()."""
    import logging

    from kassign.fleet.collect import collect
    from kassign.fleet.connect import settings_from

    settings = settings_from(secure_broker.address("SASL_SSL"), str(configs["SASL_SSL"]))
    with caplog.at_level(logging.DEBUG):
        tables = collect(settings, groups=[live_groups.classic], progress=False, timeout=TIMEOUT)
    assert tables["members"].num_rows == 1
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Starting KafkaAdminClient with configuration" in logged  # the record that held it
    _assert_no_secret(secure_broker, [logged], [])


def test_a_broker_that_stops_answering_mid_way_is_one_error_and_no_snapshot(
    secure_broker: SecureKafkaBroker,
    live_groups: Groups,
    configs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The broker is frozen (SIGSTOP) once the groups are described, before the offsets are read:
    the command ends with one line and exit status 2 within its timeout, and writes nothing."""
    import signal

    from kassign import cli
    from kassign.fleet import collect as coll

    assert secure_broker.proc is not None
    pid = secure_broker.proc.pid
    real, frozen = coll._progress, []

    def freeze_before_offsets(label: str, total: int, enabled: bool) -> Any:
        if label == "committed offsets" and not frozen:
            os.kill(pid, signal.SIGSTOP)
            frozen.append(time.monotonic())
        return real(label, total, enabled)

    monkeypatch.setattr(coll, "_progress", freeze_before_offsets)
    out = tmp_path / "snap"
    args = ["snapshot", "--bootstrap-servers", secure_broker.address("SASL_SSL")]
    args += ["--command-config", str(configs["SASL_SSL"]), "--out", str(out), "--quiet", "--timeout", "3"]
    try:
        rc = cli.main([*args, "--group", live_groups.classic, "--group", live_groups.modern])
    finally:
        os.kill(pid, signal.SIGCONT)
    err = capsys.readouterr().err
    assert frozen, "the snapshot did not reach the offsets"
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kassign snapshot: ") and "committed offsets" in lines[0], err
    assert not out.exists()
    assert time.monotonic() - frozen[0] < 3 + 10
