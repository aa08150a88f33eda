"""The fleet job on a local Spark: results equal kassign.assign per group, nothing is lost, the
report renders. One SparkSession for the module (start-up is ~8 s)."""

import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kassign
from kassign import Member, quality
from kassign.fleet import synth
from kassign.fleet.snapshot import MEMBERS_SCHEMA, OFFSETS_SCHEMA, SnapshotError
from support.spark_env import require_spark

# PySpark and Java 17+: skipped without them on a developer's machine, a failure in CI
require_spark()

from kassign.fleet.config import FleetConfig, FleetError  # noqa: E402
from kassign.fleet.group import strategy_call, strategy_labels  # noqa: E402
from kassign.fleet.job import run_fleet  # noqa: E402
from kassign.fleet.plan import read_table  # noqa: E402
from kassign.fleet.session import spark_session  # noqa: E402

pytestmark = pytest.mark.spark

#: Upper bound of this whole module (Spark session, fixtures and tests), so a hung Spark job fails
#: CI instead of eating its 90 minutes. The module takes about 4 minutes on a loaded 2-core machine
#: (docs/fleet.md); subprocesses have timeouts of their own.
MODULE_TIMEOUT_S = int(os.environ.get("KASSIGN_SPARK_TEST_TIMEOUT", "1200"))


@pytest.fixture(scope="module", autouse=True)
def _bounded_time():
    import signal

    def expire(signum, frame):
        raise TimeoutError(f"the Spark tests exceeded {MODULE_TIMEOUT_S}s (KASSIGN_SPARK_TEST_TIMEOUT)")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(MODULE_TIMEOUT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


#: The job's default labels: kassign.STRATEGIES plus lag-aware's other modes (issue 17).
STRATEGIES = strategy_labels()
BAD_GROUPS = {
    ("kafka-prod-eu1", "orphan-offsets-only"): "no members",
    ("kafka-prod-eu1", "bad-null-member"): "member_id is null",
    ("kafka-prod-eu1", "bad-duplicate-member"): "duplicate member_id",
}


@pytest.fixture(scope="module")
def spark():
    s = spark_session(FleetConfig(master="local[2]", driver_memory="1g"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory):
    """A 40-group synthetic fleet plus three broken groups."""
    d = tmp_path_factory.mktemp("fleet")
    tables = synth.generate(40, seed=11)
    extra_members = [
        {"cluster": "kafka-prod-eu1", "group_id": "bad-null-member", "member_id": None, "topics": ["x"]},
        {"cluster": "kafka-prod-eu1", "group_id": "bad-duplicate-member", "member_id": "m", "topics": ["x"]},
        {"cluster": "kafka-prod-eu1", "group_id": "bad-duplicate-member", "member_id": "m", "topics": ["x"]},
    ]
    tables["members"] = pa.concat_tables(
        [tables["members"], pa.Table.from_pylist(extra_members, schema=MEMBERS_SCHEMA)]
    )
    topic = tables["partitions"].column("topic")[0].as_py()
    tables["offsets"] = pa.concat_tables(
        [
            tables["offsets"],
            pa.Table.from_pylist(
                [
                    {
                        "cluster": "kafka-prod-eu1",
                        "group_id": "orphan-offsets-only",
                        "topic": topic,
                        "partition": 0,
                        "offset": 1,
                    }
                ],
                schema=OFFSETS_SCHEMA,
            ),
        ]
    )
    synth.write(tables, str(d), source={"kind": "test"})
    return str(d)


@pytest.fixture(scope="module")
def run(spark, snapshot_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    cfg = FleetConfig(snapshot=snapshot_dir, out=str(out), churn=2, with_assignment=True, progress=False)
    return run_fleet(cfg, spark=spark)


def oracle_inputs(snapshot_dir):
    """Each group's kassign inputs, built here from the Parquet files without the job's code."""
    m = pq.read_table(os.path.join(snapshot_dir, "members.parquet")).to_pylist()
    p = pq.read_table(os.path.join(snapshot_dir, "partitions.parquet")).to_pylist()
    o = pq.read_table(os.path.join(snapshot_dir, "offsets.parquet")).to_pylist()
    partitions_per_topic = defaultdict(dict)
    racks = defaultdict(dict)
    log = {}
    for r in p:
        c = r["cluster"]
        partitions_per_topic[c][r["topic"]] = max(partitions_per_topic[c].get(r["topic"], 0), r["partition"] + 1)
        if r["replica_racks"]:
            racks[c][(r["topic"], r["partition"])] = r["replica_racks"]
        log[(c, r["topic"], r["partition"])] = (r["beginning_offset"], r["end_offset"])
    committed = {(r["cluster"], r["group_id"], r["topic"], r["partition"]): r["offset"] for r in o}
    groups = defaultdict(dict)
    for r in m:
        if r["member_id"] is None:
            continue
        groups[(r["cluster"], r["group_id"])][r["member_id"]] = Member(
            r["topics"],
            [(d["topic"], d["partition"]) for d in r["owned_partitions"] or []],
            generation=r["generation"] if r["generation"] is not None else -1,
            rack=r["rack"] or None,
            group_instance_id=r["group_instance_id"],
            user_data=r["user_data"],
        )
    out = {}
    for (c, g), members in groups.items():
        lags = {}
        for t in {t for mem in members.values() for t in mem.topics}:
            for i in range(partitions_per_topic[c].get(t, 0)):
                begin, end = log[(c, t, i)]
                off = committed.get((c, g, t, i))
                nxt = end if off is None or off < 0 else max(off, begin)  # auto.offset.reset=latest
                lags[(t, i)] = max(end - nxt, 0)
        out[(c, g)] = (members, dict(partitions_per_topic[c]), lags, racks[c])
    return out


def test_every_group_and_strategy_has_exactly_one_row(run, snapshot_dir):
    t = run.results.to_pylist()
    groups = pq.read_table(os.path.join(snapshot_dir, "groups.parquet")).to_pylist()
    expected = {(g["cluster"], g["group_id"]) for g in groups} | set(BAD_GROUPS)
    keys = [(r["cluster"], r["group_id"], r["strategy"]) for r in t]
    assert len(keys) == len(set(keys))
    assert set(keys) == {(c, g, s) for c, g in expected for s in STRATEGIES}


def test_bad_groups_are_error_rows(run):
    by_key = defaultdict(list)
    for r in run.results.to_pylist():
        by_key[(r["cluster"], r["group_id"])].append(r)
    for key, message in BAD_GROUPS.items():
        rows = by_key[key]
        assert len(rows) == len(STRATEGIES)
        assert all(r["status"] == "error" and message in r["error"] for r in rows), rows
    # the synthetic fleet's empty groups (state Empty) are error rows too, with their state
    empty = [rows for key, rows in by_key.items() if key not in BAD_GROUPS and rows[0]["state"] == "Empty"]
    assert empty and all(r["status"] == "error" and "no members" in r["error"] for rows in empty for r in rows)
    ok = [r for rows in by_key.values() for r in rows if r["status"] == "ok"]
    assert len(ok) >= 30 * len(STRATEGIES)


def test_results_equal_kassign_assign_on_the_same_groups(run, snapshot_dir):
    inputs = oracle_inputs(snapshot_dir)
    full = pq.read_table(run.results_path).to_pylist()
    compared = 0
    for r in full:
        if r["status"] != "ok":
            continue
        members, partitions_per_topic, lags, racks = inputs[(r["cluster"], r["group_id"])]
        name, options = strategy_call(r["strategy"])
        expected = kassign.assign(name, members, partitions_per_topic, lags=lags, partition_racks=racks, **options)
        got = defaultdict(list)
        for d in r["assignment"]:
            got[d["member_id"]].append((d["topic"], d["partition"]))
        assert dict(got) == {k: [tuple(tp) for tp in v] for k, v in expected.items() if v}, (
            r["group_id"],
            r["strategy"],
        )
        q = quality.evaluate(members, partitions_per_topic, expected, lags=lags, partition_racks=racks)
        for k, v in q.as_dict().items():
            assert r[k] == (pytest.approx(v) if isinstance(v, float) else v), (r["group_id"], r["strategy"], k)
        assert r["violations"] == 0
        compared += 1
    assert compared >= 30 * len(STRATEGIES)


def test_churn_columns(run):
    ok = [r for r in run.results.to_pylist() if r["status"] == "ok"]
    assert all(r["churn_rounds"] == 2 and r["churn_rebalances"] >= 2 and r["churn_moves"] >= 0 for r in ok)
    assert sum(r["churn_moves"] for r in ok) > 0


def test_results_read_back_equal_sparks_own_read(spark, run, monkeypatch):
    # the job reads a local results.parquet with pyarrow; before, it read it through Spark, which is
    # still how it reads a remote one: both give the same table, in result_schema's types
    from kassign.fleet import plan
    from kassign.fleet.group import result_schema

    spark_read = spark.read.parquet(run.results_path).drop("assignment").toArrow()
    assert spark_read.num_rows == run.results.num_rows > 0
    assert run.results.schema == result_schema(False)
    key = ("cluster", "group_id", "strategy")

    def rows(table):
        return sorted(table.to_pylist(), key=lambda r: tuple(r[k] for k in key))

    assert rows(run.results) == rows(spark_read)
    keys = [tuple(r[k] for k in key[:2]) for r in run.results.to_pylist()]
    assert keys == sorted(keys)
    # within a group, the strategies' order
    order = {s: i for i, s in enumerate(run.strategies)}
    first = [r["strategy"] for r in run.results.to_pylist() if tuple(r[k] for k in key[:2]) == keys[0]]
    assert first == sorted(first, key=order.__getitem__) and len(first) == len(run.strategies)
    monkeypatch.setattr(plan, "is_local_path", lambda path: False)
    through_spark = plan.read_results(spark, run.results_path)
    assert through_spark.schema == result_schema(False)
    assert through_spark.equals(run.results)


def test_report_html_and_pngs(run):
    html = open(run.report_path, encoding="utf-8").read()
    pngs = re.findall(r'<img src="([^"]+)"', html)
    assert len(pngs) >= 5
    from PIL import Image

    for name in pngs:
        path = os.path.join(os.path.dirname(run.report_path), name)
        with Image.open(path) as im:
            assert im.format == "PNG" and im.width > 400 and im.height > 300
            colors = im.convert("RGB").getcolors(maxcolors=1 << 16)
            assert colors is None or len(colors) > 10, f"{name} looks blank"
    for s in STRATEGIES:
        assert re.search(rf"<td[^>]*>{re.escape(s)}</td>", html), s
    assert "orphan-offsets-only" in html and "no members" in html


def test_missing_column_is_a_clear_error(spark, snapshot_dir, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(snapshot_dir, bad)
    m = pq.read_table(bad / "members.parquet").drop(["topics"])
    pq.write_table(m, bad / "members.parquet")
    with pytest.raises(SnapshotError, match=r"members\.parquet: missing required column.*topics"):
        run_fleet(FleetConfig(snapshot=str(bad), out=str(tmp_path / "o"), progress=False), spark=spark)
    # the same check when Spark reads the table (remote filesystems skip the local check)
    with pytest.raises(SnapshotError, match=r"missing required column.*topics"):
        read_table(spark, str(bad), "members")
    no_offsets = tmp_path / "no-offsets"
    shutil.copytree(snapshot_dir, no_offsets)
    os.remove(no_offsets / "offsets.parquet")
    with pytest.raises(SnapshotError, match=r"missing table offsets\.parquet"):
        run_fleet(FleetConfig(snapshot=str(no_offsets), out=str(tmp_path / "o"), progress=False), spark=spark)


def test_unknown_strategy_fails_before_spark(tmp_path):
    with pytest.raises(FleetError, match="unknown strategy 'nope'"):
        run_fleet(FleetConfig(strategies=["range", "nope"], out=str(tmp_path)), spark=None)
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "kassign", "fleet", "--strategies", "range,nope", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "unknown strategy 'nope'" in r.stderr and "range" in r.stderr
    assert "Spark" not in r.stderr and time.monotonic() - t0 < 8


def test_cli_end_to_end(fleet_cli_run):
    """``kassign fleet`` as a user runs it (tests/conftest.py runs it once per session)."""
    r, out = fleet_cli_run.proc, fleet_cli_run.out
    assert r.returncode == 0, r.stderr[-3000:]
    assert "groups ok" in r.stdout and "report:" in r.stdout
    assert "groups done" in r.stderr  # progress
    assert "Setting default log level" not in r.stderr and " INFO " not in r.stderr  # quiet Spark
    res = pq.read_table(out / "results.parquet")
    assert res.num_rows == fleet_cli_run.groups * len(STRATEGIES)
    assert (out / "report.html").exists()


# -- a real broker's snapshot through the job -----------------------------------------------------


def _retry(fn, timeout=60.0):
    """Retry while the fresh broker's group coordinator comes up (__consumer_offsets)."""
    from kafka.errors import CoordinatorNotAvailableError, NotCoordinatorError

    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except (CoordinatorNotAvailableError, NotCoordinatorError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class _Member:
    """A kafka-python consumer that joins the group, pauses its partitions and keeps heartbeating."""

    def __init__(self, bootstrap, group, topic, instance=None):
        import threading

        from kafka import KafkaConsumer

        self.consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="latest",
            group_instance_id=instance,
            client_id=f"fleet-test-{instance or 'dyn'}",
        )
        self.assigned = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            self.consumer.poll(timeout_ms=100)
            a = self.consumer.assignment()
            if a:
                self.consumer.pause(*a)
            self.assigned = {(tp.topic, tp.partition) for tp in a}

    def close(self):
        self.stop.set()
        self.thread.join(timeout=30)
        self.consumer.close()


@pytest.mark.broker
def test_snapshot_from_a_real_broker_round_trips_through_the_job(kafka_broker, spark, tmp_path):
    broker = kafka_broker
    bootstrap = broker.bootstrap
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.structs import OffsetAndMetadata
    from kafka.structs import TopicPartition as KTP

    from kassign.fleet.collect import collect
    from kassign.fleet.snapshot import check_snapshot

    topic, group, empty = (broker.unique_name(p) for p in ("fleet-t", "fleet-g", "fleet-empty"))
    broker.create_topic(topic, partitions=4)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    ends = {0: 100, 1: 10, 2: 0, 3: 50}
    for p, n in ends.items():
        for _ in range(n):
            producer.send(topic, value=b"x", partition=p)
    producer.flush()
    producer.close()
    # committed offsets while nobody is in the groups: fleet-g p3 stays uncommitted
    committed = {0: 5, 1: 5, 2: 0}
    _retry(
        lambda: admin.alter_group_offsets(
            group, {KTP(topic, p): OffsetAndMetadata(o, "", -1) for p, o in committed.items()}
        )
    )
    _retry(lambda: admin.alter_group_offsets(empty, {KTP(topic, 0): OffsetAndMetadata(40, "", -1)}))
    # One member at a time: the first owns every partition before the second joins, so the group
    # goes through one rebalance with one leader rather than two joins racing.
    members = [_Member(bootstrap, group, topic)]
    try:
        deadline = time.monotonic() + 60
        while not members[0].assigned:
            if time.monotonic() > deadline:
                pytest.fail(f"the first member of {group} got no partitions")
            time.sleep(0.5)
        members.append(_Member(bootstrap, group, topic, instance="static-1"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            desc = admin.describe_groups([group])[group]
            owned = [m.assigned for m in members]
            if (
                desc.get("group_state") == "Stable"
                and all(owned)
                and set().union(*owned) == {(topic, p) for p in range(4)}
            ):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"group {group} did not stabilise: {[m.assigned for m in members]}")
        tables = collect(bootstrap, cluster="test", progress=False)
        snap = tmp_path / "snap"
        synth.write(tables, str(snap), source={"kind": "kafka", "bootstrap_servers": bootstrap})
    finally:
        for m in members:
            m.close()
        admin.close()

    check_snapshot(str(snap))
    m = [r for r in tables["members"].to_pylist() if r["group_id"] == group]
    assert len(m) == 2 and all(r["topics"] == [topic] for r in m)
    assert {r["group_instance_id"] for r in m} == {None, "static-1"}
    owned_snapshot = {r["member_id"]: {(d["topic"], d["partition"]) for d in r["owned_partitions"]} for r in m}
    assert sorted(map(sorted, owned_snapshot.values())) == sorted(sorted(x.assigned) for x in members)
    o = {(r["group_id"], r["partition"]): r["offset"] for r in tables["offsets"].to_pylist()}
    assert {p: o[(group, p)] for p in committed} == committed and (group, 3) not in o
    assert o[(empty, 0)] == 40
    parts = {r["partition"]: r for r in tables["partitions"].to_pylist() if r["topic"] == topic}
    assert {p: r["end_offset"] for p, r in parts.items()} == ends
    g = {r["group_id"]: r for r in tables["groups"].to_pylist()}
    assert g[group]["protocol"] == "range" and g[empty]["state"] == "Empty"

    run = run_fleet(
        FleetConfig(snapshot=str(snap), out=str(tmp_path / "out"), with_assignment=True, progress=False), spark=spark
    )
    rows = {(r["group_id"], r["strategy"]): r for r in pq.read_table(run.results_path).to_pylist()}
    inputs = oracle_inputs(str(snap))
    for s in STRATEGIES:
        r = rows[(group, s)]
        assert r["status"] == "ok", r["error"]
        assert (r["members"], r["partitions"], r["current_protocol"]) == (2, 4, "range")
        assert (r["sum_lag"], r["max_lag"], r["uncommitted"]) == (95 + 5, 95, 1)
        mem, partitions_per_topic, lags, racks = inputs[("test", group)]
        name, options = strategy_call(s)
        expected = kassign.assign(name, mem, partitions_per_topic, lags=lags, partition_racks=racks, **options)
        got = defaultdict(list)
        for d in r["assignment"]:
            got[d["member_id"]].append((d["topic"], d["partition"]))
        assert dict(got) == {k: [tuple(tp) for tp in v] for k, v in expected.items() if v}
        e = rows[(empty, s)]
        assert e["status"] == "error" and "no members" in e["error"] and e["state"] == "Empty"
    # the group runs kafka-python's range: kassign's range keeps every partition where it is
    assert rows[(group, "range")]["moves"] == 0 and rows[(group, "range")]["kept"] == 4


@pytest.mark.broker
def test_snapshot_cli_against_a_real_broker(kafka_broker, tmp_path):
    broker = kafka_broker
    topic = broker.create_topic(broker.unique_name("fleet-cli-t"), partitions=3)
    group = broker.unique_name("fleet-cli-g")
    from kafka import KafkaAdminClient
    from kafka.structs import OffsetAndMetadata
    from kafka.structs import TopicPartition as KTP

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        _retry(lambda: admin.alter_group_offsets(group, {KTP(topic, 1): OffsetAndMetadata(0, "", -1)}))
    finally:
        admin.close()
    out = tmp_path / "snap"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kassign",
            "snapshot",
            "--bootstrap-servers",
            broker.bootstrap,
            "--out",
            str(out),
            "--cluster",
            "cli",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "describe groups: " in r.stderr and "log offsets: " in r.stderr  # progress (plain: not a terminal)
    assert f"wrote {out}" in r.stdout
    from kassign.fleet.snapshot import check_snapshot

    check_snapshot(str(out))
    groups = pq.read_table(out / "groups.parquet").to_pylist()
    # a group that only ever had offsets committed for it: Empty, no protocol type yet
    # (ListGroups v5 types it "classic": it never had a KIP-848 member)
    assert {
        "cluster": "cli",
        "group_id": group,
        "state": "Empty",
        "protocol_type": "",
        "protocol": "",
        "group_protocol": "classic",
    } in groups
    parts = [p for p in pq.read_table(out / "partitions.parquet").to_pylist() if p["topic"] == topic]
    assert sorted(p["partition"] for p in parts) == [0, 1, 2]
