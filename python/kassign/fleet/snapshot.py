"""The fleet snapshot format (Parquet) and ``kassign snapshot``, which collects one from Kafka.

A snapshot is a directory (documented in docs/fleet.md)::

    members.parquet     one row per group member
    partitions.parquet  one row per topic partition
    offsets.parquet     one row per committed offset of a group
    groups.parquet      optional: one row per group (lists groups without members, e.g. Empty)
    snapshot.json       optional: format version, source, row counts

Each ``.parquet`` may also be a directory of Parquet files (as Spark writes them). Columns are
checked by :func:`check_snapshot` before the fleet job starts; extra columns are ignored.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import struct
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, Callable, Optional

import pyarrow as pa

FORMAT_VERSION = 1

OWNED_TYPE = pa.list_(pa.struct([pa.field("topic", pa.string()), pa.field("partition", pa.int32())]))

MEMBERS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("member_id", pa.string()),
        pa.field("group_instance_id", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("host", pa.string()),
        pa.field("rack", pa.string()),
        pa.field("topics", pa.list_(pa.string())),
        pa.field("owned_partitions", OWNED_TYPE),
        pa.field("generation", pa.int32()),
        pa.field("user_data", pa.binary()),
    ]
)
PARTITIONS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replica_racks", pa.list_(pa.string())),
        pa.field("beginning_offset", pa.int64()),
        pa.field("end_offset", pa.int64()),
    ]
)
OFFSETS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64()),
    ]
)
GROUPS_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("group_id", pa.string(), nullable=False),
        pa.field("state", pa.string()),
        pa.field("protocol_type", pa.string()),
        pa.field("protocol", pa.string()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "members": MEMBERS_SCHEMA,
    "partitions": PARTITIONS_SCHEMA,
    "offsets": OFFSETS_SCHEMA,
    "groups": GROUPS_SCHEMA,
}
REQUIRED_TABLES = ("members", "partitions", "offsets")
#: Columns a snapshot must have (the rest are optional and read as null when absent).
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "members": ("cluster", "group_id", "member_id", "topics"),
    "partitions": ("cluster", "topic", "partition"),
    "offsets": ("cluster", "group_id", "topic", "partition", "offset"),
    "groups": ("cluster", "group_id"),
}


class SnapshotError(ValueError):
    """A snapshot directory is missing a table or a column, or a column has the wrong type."""


def table_path(snapshot_dir: str, name: str) -> str:
    return os.path.join(snapshot_dir, f"{name}.parquet")


def _type_family(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list<" + _type_family(t.value_type) + ">"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{_type_family(f.type)}" for f in t) + ">"
    if pa.types.is_dictionary(t):
        return _type_family(t.value_type)
    return str(t)


def read_schema(path: str) -> pa.Schema:
    import pyarrow.dataset as ds

    return ds.dataset(path, format="parquet").schema


def check_snapshot(snapshot_dir: str) -> dict[str, Optional[pa.Schema]]:
    """Check that ``snapshot_dir`` holds a readable snapshot; return each table's file schema
    (None for an absent optional table).

    Raises:
        SnapshotError: naming the missing table, missing column or wrongly typed column.
    """
    if not os.path.isdir(snapshot_dir):
        raise SnapshotError(f"snapshot {snapshot_dir!r}: not a directory")
    found: dict[str, Optional[pa.Schema]] = {}
    for name, schema in TABLES.items():
        path = table_path(snapshot_dir, name)
        if not os.path.exists(path):
            if name in REQUIRED_TABLES:
                raise SnapshotError(f"snapshot {snapshot_dir!r}: missing table {name}.parquet")
            found[name] = None
            continue
        try:
            file_schema = read_schema(path)
        except Exception as e:  # pyarrow raises several types for unreadable files
            raise SnapshotError(f"snapshot table {path!r}: not readable as Parquet: {e}") from None
        missing = [c for c in REQUIRED_COLUMNS[name] if c not in file_schema.names]
        if missing:
            raise SnapshotError(
                f"snapshot table {name}.parquet: missing required column(s) {', '.join(missing)} "
                f"(has: {', '.join(file_schema.names)})"
            )
        for f in schema:
            if f.name in file_schema.names:
                got = _type_family(file_schema.field(f.name).type)
                want = _type_family(f.type)
                if got != want:
                    raise SnapshotError(
                        f"snapshot table {name}.parquet: column {f.name} has type "
                        f"{file_schema.field(f.name).type}, expected {f.type}"
                    )
        found[name] = file_schema
    return found


def write_meta(out: str, *, source: dict[str, Any], counts: dict[str, int]) -> None:
    meta = {
        "format": "kassign-fleet-snapshot",
        "version": FORMAT_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "rows": counts,
    }
    with open(os.path.join(out, "snapshot.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


# ------------------------------------------------------------------------------------------
# Collecting a snapshot from a Kafka cluster (kafka-python's admin client)
# ------------------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on stderr (a plain line per step when stderr is not a terminal)."""

    def __init__(self, label: str, total: int, stream: Any = None, width: int = 30) -> None:
        self.label, self.total, self.done = label, max(total, 0), 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0
        self._draw(force=True)

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        frac = self.done / self.total if self.total else 1.0
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"{self.label} [{bar}] {self.done}/{self.total}"
        if self.tty:
            self.stream.write("\r" + line)
        elif force or self.done == self.total:
            self.stream.write(line + "\n")
        self.stream.flush()

    def update(self, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        self._draw()

    def close(self) -> None:
        self.done = self.total
        self._draw(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _decoders() -> tuple[Callable[[bytes], Any], Callable[[bytes], Any]]:
    """kassign.protocol's decoders when that module is present, else the local fallback."""
    try:
        from kassign.protocol import decode_assignment, decode_subscription  # type: ignore[attr-defined]

        return decode_subscription, decode_assignment
    except ImportError:
        return _fallback_decode_subscription, _fallback_decode_assignment


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("truncated")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def i16(self) -> int:
        return int(struct.unpack(">h", self.take(2))[0])

    def i32(self) -> int:
        return int(struct.unpack(">i", self.take(4))[0])

    def string(self) -> Optional[str]:
        n = self.i16()
        return None if n < 0 else self.take(n).decode("utf-8")

    def bytes_(self) -> Optional[bytes]:
        n = self.i32()
        return None if n < 0 else self.take(n)

    def partitions(self) -> list[tuple[str, int]]:
        out = []
        for _ in range(self.i32()):
            topic = self.string() or ""
            for _ in range(self.i32()):
                out.append((topic, self.i32()))
        return out

    def at_end(self) -> bool:
        return self.pos >= len(self.data)


class _Decoded:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def _fallback_decode_subscription(data: bytes) -> Any:
    """ConsumerProtocol subscription v0-v3 (DESIGN.md section 3); used only when
    kassign.protocol is not available."""
    r = _Reader(data)
    version = r.i16()
    if version < 0:
        raise ValueError(f"negative subscription version {version}")
    topics = [r.string() or "" for _ in range(r.i32())]
    user_data = r.bytes_()
    owned: list[tuple[str, int]] = []
    generation, rack = -1, None
    if version >= 1 and not r.at_end():
        owned = r.partitions()
    if version >= 2 and not r.at_end():
        generation = r.i32()
    if version >= 3 and not r.at_end():
        rack = r.string() or None
    return _Decoded(version=version, topics=topics, user_data=user_data, owned_partitions=owned,
                    generation=generation, rack=rack)


def _fallback_decode_assignment(data: bytes) -> Any:
    r = _Reader(data)
    version = r.i16()
    if version < 0:
        raise ValueError(f"negative assignment version {version}")
    partitions = r.partitions()
    user_data = r.bytes_() if not r.at_end() else None
    return _Decoded(version=version, partitions=partitions, user_data=user_data)


def _user_data_generation(protocol: str, user_data: Optional[bytes]) -> int:
    """The generation carried in user data by cooperative-sticky (int32) and sticky (v1), decoded
    with kassign.protocol when present; -1 when absent or undecodable (as Java does)."""
    if not user_data:
        return -1
    try:
        from kassign.protocol import decode_generation, decode_sticky_user_data  # type: ignore[attr-defined]
    except ImportError:
        decode_generation = decode_sticky_user_data = None
    try:
        if protocol == "cooperative-sticky":
            if decode_generation is not None:
                return int(decode_generation(user_data))
            return int(struct.unpack(">i", user_data[:4])[0]) if len(user_data) >= 4 else -1
        if protocol == "sticky":
            if decode_sticky_user_data is not None:
                gen = decode_sticky_user_data(user_data)[1]
                return -1 if gen is None else int(gen)
            r = _Reader(user_data)
            r.partitions()
            return r.i32() if not r.at_end() else -1
    except (ValueError, struct.error, UnicodeDecodeError):
        return -1
    return -1


def _as_bytes(value: Any) -> Optional[bytes]:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):  # a client that decoded the bytes as latin-1 text
        return value.encode("latin-1")
    return None


def _admin_client(bootstrap_servers: str, **config: Any) -> Any:
    from kafka import KafkaAdminClient

    class _RawMetadataAdmin(KafkaAdminClient):  # type: ignore[misc]
        """Keeps DescribeGroups member metadata/assignment as the raw bytes, so kassign's own
        decoders (which know every version and the rack field) read them."""

        def _describe_groups_process_response(self, response: Any) -> dict[str, Any]:
            import kafka.errors as Errors

            results = {}
            for group in response.groups:
                d = group.to_dict()
                # to_dict() turns the metadata bytes into str; keep the wire bytes
                for md, raw in zip(d.get("members", []), group.members):
                    md["member_metadata"] = _as_bytes(raw.member_metadata)
                    md["member_assignment"] = _as_bytes(raw.member_assignment)
                code = d.pop("error_code")
                msg = d.pop("error_message", "")
                d["error"] = str(Errors.for_code(code)(msg)) if code else None
                results[group.group_id] = d
            return results

    return _RawMetadataAdmin(bootstrap_servers=bootstrap_servers, client_id="kassign-snapshot", **config)


def _chunks(items: Sequence[Any], n: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def collect(
    bootstrap_servers: str,
    *,
    cluster: Optional[str] = None,
    groups: Optional[Sequence[str]] = None,
    progress: bool = True,
    admin_config: Optional[dict[str, Any]] = None,
) -> dict[str, pa.Table]:
    """Read the consumer groups, members, partitions and offsets of one Kafka cluster.

    Arguments:
        bootstrap_servers: ``host:port[,host:port]``.
        cluster: the snapshot's cluster name (default: the cluster id the brokers report).
        groups: only these group ids (default: every consumer group).

    Members' ``owned_partitions`` are their current assignment (DescribeGroups member
    assignment); ``generation`` comes from the subscription (v2+) or the cooperative-sticky /
    sticky user data; ``rack`` from the subscription (v3). Offsets: committed offsets of each
    group; beginning/end offsets of every partition some group subscribes to or commits to.
    """
    from kafka.protocol.consumer import OffsetSpec
    from kafka.structs import TopicPartition as KTP

    decode_subscription, decode_assignment = _decoders()
    admin = _admin_client(bootstrap_servers, **(admin_config or {}))
    stream = sys.stderr if progress else open(os.devnull, "w")
    try:
        meta = admin.describe_cluster()
        cluster_name = cluster or meta.get("cluster_id") or bootstrap_servers
        broker_rack = {b["broker_id"]: b.get("rack") for b in meta.get("brokers", [])}
        if groups is None:
            listed = admin.list_groups()
            group_ids = sorted(
                g["group_id"] for g in listed if g.get("protocol_type") in ("consumer", "", None)
            )
        else:
            group_ids = list(groups)

        member_rows: list[dict[str, Any]] = []
        group_rows: list[dict[str, Any]] = []
        bar = Progress("describe groups", len(group_ids), stream)
        for chunk in _chunks(group_ids, 50):
            described = admin.describe_groups(list(chunk)) if chunk else {}
            for gid in chunk:
                d = described.get(gid)
                if d is None:
                    continue
                protocol = d.get("protocol_data") or ""
                group_rows.append(
                    {"cluster": cluster_name, "group_id": gid, "state": d.get("group_state"),
                     "protocol_type": d.get("protocol_type"), "protocol": protocol}
                )
                for m in d.get("members", []):
                    member_rows.append(_member_row(cluster_name, gid, protocol, m, decode_subscription,
                                                   decode_assignment))
            bar.update(len(chunk))
        bar.close()

        offset_rows: list[dict[str, Any]] = []
        bar = Progress("committed offsets", len(group_ids), stream)
        for chunk in _chunks(group_ids, 50):
            if chunk:
                fetched = admin.list_group_offsets(list(chunk))
                for gid, offs in fetched.items():
                    for tp, om in offs.items():
                        offset_rows.append(
                            {"cluster": cluster_name, "group_id": gid, "topic": tp.topic,
                             "partition": tp.partition, "offset": int(om.offset)}
                        )
            bar.update(len(chunk))
        bar.close()

        topics = sorted(
            {t for r in member_rows for t in r["topics"]} | {r["topic"] for r in offset_rows}
        )
        described_topics = admin.describe_topics(topics) if topics else []
        part_rows: list[dict[str, Any]] = []
        tps = []
        for t in described_topics:
            if t.get("error_code"):
                continue
            for p in t.get("partitions", []):
                racks = sorted({broker_rack.get(n) for n in p.get("replica_nodes", []) if broker_rack.get(n)})
                part_rows.append(
                    {"cluster": cluster_name, "topic": t["name"], "partition": p["partition_index"],
                     "replica_racks": racks, "beginning_offset": None, "end_offset": None}
                )
                tps.append(KTP(t["name"], p["partition_index"]))
        bar = Progress("log offsets", len(tps), stream)
        begin: dict[Any, int] = {}
        end: dict[Any, int] = {}
        for chunk in _chunks(tps, 500):
            b = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in chunk})
            e = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in chunk})
            begin.update({tp: v.offset for tp, v in b.items()})
            end.update({tp: v.offset for tp, v in e.items()})
            bar.update(len(chunk))
        bar.close()
        for row, tp in zip(part_rows, tps):
            row["beginning_offset"] = begin.get(tp)
            row["end_offset"] = end.get(tp)
    finally:
        admin.close()
        if not progress:
            stream.close()
    return {
        "members": pa.Table.from_pylist(member_rows, schema=MEMBERS_SCHEMA),
        "partitions": pa.Table.from_pylist(part_rows, schema=PARTITIONS_SCHEMA),
        "offsets": pa.Table.from_pylist(offset_rows, schema=OFFSETS_SCHEMA),
        "groups": pa.Table.from_pylist(group_rows, schema=GROUPS_SCHEMA),
    }


def _member_row(cluster: str, group_id: str, protocol: str, m: dict[str, Any],
                decode_subscription: Callable[[bytes], Any],
                decode_assignment: Callable[[bytes], Any]) -> dict[str, Any]:
    topics: list[str] = []
    owned: list[dict[str, Any]] = []
    generation, rack, user_data = -1, None, None
    meta = m.get("member_metadata")
    if isinstance(meta, (bytes, bytearray)) and meta:
        try:
            sub = decode_subscription(bytes(meta))
            topics = list(sub.topics)
            user_data = sub.user_data
            generation = sub.generation if sub.generation is not None else -1
            rack = sub.rack or None
            owned = [{"topic": tp[0], "partition": tp[1]} for tp in sub.owned_partitions]
        except ValueError:
            pass
    assignment = m.get("member_assignment")
    if isinstance(assignment, (bytes, bytearray)) and assignment:
        try:
            asg = decode_assignment(bytes(assignment))
            current = [{"topic": tp[0], "partition": tp[1]} for tp in asg.partitions]
            if current:
                owned = current
        except ValueError:
            pass
    if generation < 0:
        generation = _user_data_generation(protocol, user_data)
    return {
        "cluster": cluster,
        "group_id": group_id,
        "member_id": m.get("member_id"),
        "group_instance_id": m.get("group_instance_id"),
        "client_id": m.get("client_id"),
        "host": m.get("client_host"),
        "rack": rack,
        "topics": topics,
        "owned_partitions": sorted(owned, key=lambda d: (d["topic"], d["partition"])),
        "generation": generation,
        "user_data": user_data,
    }


def snapshot(bootstrap_servers: str, out: str, **kwargs: Any) -> dict[str, int]:
    """Collect a snapshot (see :func:`collect`) and write it to ``out``; return row counts."""
    from .synth import write

    tables = collect(bootstrap_servers, **kwargs)
    write(tables, out, source={"kind": "kafka", "bootstrap_servers": bootstrap_servers})
    return {name: t.num_rows for name, t in tables.items()}
