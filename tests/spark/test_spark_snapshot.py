"""kassign.fleet.snapshot and .collect without a broker: format checks, member rows from raw DescribeGroups bytes."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kassign.fleet import collect as coll
from kassign.fleet import snapshot as snap
from kassign.fleet.snapshot import MEMBERS_SCHEMA, SnapshotError, check_snapshot

# docs/wire.md: subscription v3; topics ["t"]; user_data = coop generation 5; owned t-0, t-1;
# generation 5; rack "r1"
SUB_V3 = bytes.fromhex("0003000000010001740000000400000005000000010001740000000200000000000000010000000500027231")
# docs/wire.md: assignment v3 of t-0 and t-1 with null user data
ASSIGN_V3 = bytes.fromhex("000300000001000174000000020000000000000001ffffffff")


def test_member_row_from_raw_metadata():
    m = {
        "member_id": "c-1",
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "/10.0.0.1",
        "member_metadata": SUB_V3,
        "member_assignment": ASSIGN_V3,
    }
    row = coll._member_row("k", "g", "cooperative-sticky", m)
    assert row["topics"] == ["t"]
    assert row["rack"] == "r1"
    assert row["generation"] == 5
    assert row["user_data"] == b"\x00\x00\x00\x05"
    assert row["owned_partitions"] == [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]
    assert (row["member_id"], row["host"]) == ("c-1", "/10.0.0.1")
    pa.Table.from_pylist([{**row, "cluster": "k", "group_id": "g"}], schema=MEMBERS_SCHEMA)


def test_member_row_v0_metadata_without_assignment():
    v0 = bytes.fromhex("000000000002000161000162ffffffff")
    row = coll._member_row("k", "g", "range", {"member_id": "x", "member_metadata": v0, "member_assignment": b""})
    assert (row["topics"], row["user_data"], row["owned_partitions"], row["generation"], row["rack"]) == (
        ["a", "b"],
        None,
        [],
        -1,
        None,
    )


def test_undecodable_metadata_keeps_the_member():
    m = {"member_id": "x", "member_metadata": b"\x00", "member_assignment": b""}
    row = coll._member_row("k", "g", "range", m)
    assert row["member_id"] == "x" and row["topics"] == [] and row["owned_partitions"] == []


def test_sticky_user_data_generation():
    # docs/wire.md: t-0 and t-1 at generation 5
    ud = bytes.fromhex("0000000100017400000002000000000000000100000005")
    assert coll._user_data_generation("sticky", ud) == 5
    assert coll._user_data_generation("sticky", ud[:-4]) == -1  # v0: no generation
    assert coll._user_data_generation("cooperative-sticky", b"\x00\x00\x00\x07") == 7
    assert coll._user_data_generation("range", b"\x00\x00\x00\x07") == -1


def test_check_snapshot_names_the_problem(tmp_path):
    with pytest.raises(SnapshotError, match="not a directory"):
        check_snapshot(str(tmp_path / "nope"))
    with pytest.raises(SnapshotError, match=r"missing table members\.parquet"):
        check_snapshot(str(tmp_path))
    empty = {n: s.empty_table() for n, s in snap.TABLES.items()}
    for n, t in empty.items():
        pq.write_table(t, tmp_path / f"{n}.parquet")
    check_snapshot(str(tmp_path))
    bad = empty["offsets"].drop(["offset"]).append_column("offset", pa.array([], pa.string()))
    pq.write_table(bad, tmp_path / "offsets.parquet")
    with pytest.raises(SnapshotError, match=r"offsets\.parquet: column offset has type string, expected int64"):
        check_snapshot(str(tmp_path))
    (tmp_path / "offsets.parquet").write_bytes(b"not parquet")
    with pytest.raises(SnapshotError, match="not readable as Parquet"):
        check_snapshot(str(tmp_path))
    # optional groups table may be absent; a directory of part files is a table too
    os.remove(tmp_path / "groups.parquet")
    os.remove(tmp_path / "offsets.parquet")
    os.mkdir(tmp_path / "offsets.parquet")
    pq.write_table(empty["offsets"], tmp_path / "offsets.parquet" / "part-0.parquet")
    assert check_snapshot(str(tmp_path))["groups"] is None


def test_progress_plain_when_stderr_is_not_a_terminal(capsys):
    with coll._progress("groups", 3, True) as bar:
        bar.update()
        bar.update(2)
    err = capsys.readouterr().err
    assert "groups: 0/3" in err and err.rstrip().endswith("]") and "groups: 3/3" in err
    assert "|" not in err  # no bar drawn into a log file
    with coll._progress("groups", 3, False) as bar:  # --quiet
        bar.update(3)
    assert capsys.readouterr().err == ""


def test_assignment_user_data_is_recorded():
    """A custom assignor's assignment user data (it blocks an online move to the KIP-848 consumer
    protocol) lands in ``assignment_user_data``; built-in assignors' null user data stays null."""
    with_ud = bytes.fromhex("000300000001000174000000010000000000000002abcd")
    base = {
        "member_id": "c-1",
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "h",
        "member_metadata": SUB_V3,
    }
    row = coll._member_row("k", "g", "stream", {**base, "member_assignment": with_ud})
    assert row["assignment_user_data"] == b"\xab\xcd"
    assert row["owned_partitions"] == [{"topic": "t", "partition": 0}]
    row = coll._member_row("k", "g", "range", {**base, "member_assignment": ASSIGN_V3})
    assert row["assignment_user_data"] is None
    pa.Table.from_pylist([{**row, "cluster": "k", "group_id": "g"}], schema=MEMBERS_SCHEMA)


class _Future:
    def __init__(self, value=None, exception=None):
        self.value, self.exception, self.is_done = value, exception, True

    def failed(self):
        return self.exception is not None


class _Client:
    """A stand-in for kafka-python's network client: node 2 fails every request."""

    def __init__(self):
        self.sent = []

    def send(self, node, request):
        self.sent.append((node, request))
        if node == 2:
            from kafka.errors import KafkaConnectionError

            return _Future(exception=KafkaConnectionError("socket disconnected"))
        return _Future(value=("ok", node, request))

    def poll(self, timeout_ms):
        pass

    def least_loaded_node(self, bootstrap_fallback=False):
        return 1


def test_a_broker_failing_mid_way_is_one_error_not_a_partial_result():
    r = coll._Requests.__new__(coll._Requests)
    r.client, r.timeout_s = _Client(), 5.0
    assert r.run([(1, "a"), (None, "b")], "describe groups") == [("ok", 1, "a"), ("ok", 1, "b")]
    with pytest.raises(coll.CollectError, match=r"describe groups: broker 2 failed: KafkaConnectionError"):
        r.run([(1, "a"), (2, "b"), (1, "c")], "describe groups")
