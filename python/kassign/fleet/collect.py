"""``kassign snapshot``: collect a fleet snapshot from a live Kafka cluster (kafka-python's admin
client; confluent-kafka's for groups on the KIP-848 consumer protocol). The format is
:mod:`kassign.fleet.snapshot`'s (docs/fleet.md).

Member metadata and assignments are read from the raw DescribeGroups bytes with
:mod:`kassign.protocol`'s decoders (every ConsumerProtocol version, the rack field included).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from ..protocol import decode_assignment, decode_generation, decode_sticky_user_data, decode_subscription
from .snapshot import GROUPS_SCHEMA, MEMBERS_SCHEMA, OFFSETS_SCHEMA, PARTITIONS_SCHEMA, SnapshotError, write


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


def _user_data_generation(protocol: str, user_data: bytes | None) -> int:
    """The generation carried in user data by cooperative-sticky (int32) and sticky (v1), decoded
    with kassign.protocol; -1 when absent or undecodable (as Java does)."""
    if not user_data:
        return -1
    try:
        if protocol == "cooperative-sticky":
            return int(decode_generation(user_data))
        if protocol == "sticky":
            gen = decode_sticky_user_data(user_data)[1]
            return -1 if gen is None else int(gen)
    except ValueError:
        return -1
    return -1


def _as_bytes(value: Any) -> bytes | None:
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
    cluster: str | None = None,
    groups: Sequence[str] | None = None,
    progress: bool = True,
    admin_config: dict[str, Any] | None = None,
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

    admin = _admin_client(bootstrap_servers, **(admin_config or {}))
    stream = sys.stderr if progress else open(os.devnull, "w")
    try:
        meta = admin.describe_cluster()
        cluster_name = cluster or meta.get("cluster_id") or bootstrap_servers
        broker_rack = {b["broker_id"]: b.get("rack") for b in meta.get("brokers", [])}
        listed = admin.list_groups()
        group_type = {g["group_id"]: g.get("group_type") or None for g in listed}
        if groups is None:
            group_ids = sorted(g["group_id"] for g in listed if g.get("protocol_type") in ("consumer", "", None))
        else:
            group_ids = list(groups)
        # KIP-848 groups are described with ConsumerGroupDescribe, not DescribeGroups.
        modern = [g for g in group_ids if group_type.get(g) == "consumer"]
        group_ids = [g for g in group_ids if group_type.get(g) != "consumer"]

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
                    {
                        "cluster": cluster_name,
                        "group_id": gid,
                        "state": d.get("group_state"),
                        "protocol_type": d.get("protocol_type"),
                        "protocol": protocol,
                        "group_protocol": group_type.get(gid),
                    }
                )
                for m in d.get("members", []):
                    member_rows.append(_member_row(cluster_name, gid, protocol, m))
            bar.update(len(chunk))
        bar.close()
        if modern:
            g_rows, m_rows = _describe_consumer_protocol_groups(
                bootstrap_servers, cluster_name, modern, admin_config or {}
            )
            group_rows += g_rows
            member_rows += m_rows
            group_ids = sorted(group_ids + modern)

        offset_rows: list[dict[str, Any]] = []
        bar = Progress("committed offsets", len(group_ids), stream)
        for chunk in _chunks(group_ids, 50):
            if chunk:
                fetched = admin.list_group_offsets(list(chunk))
                for gid, offs in fetched.items():
                    for tp, om in offs.items():
                        offset_rows.append(
                            {
                                "cluster": cluster_name,
                                "group_id": gid,
                                "topic": tp.topic,
                                "partition": tp.partition,
                                "offset": int(om.offset),
                            }
                        )
            bar.update(len(chunk))
        bar.close()

        topics = sorted({t for r in member_rows for t in r["topics"]} | {r["topic"] for r in offset_rows})
        described_topics = admin.describe_topics(topics) if topics else []
        part_rows: list[dict[str, Any]] = []
        tps = []
        for t in described_topics:
            if t.get("error_code"):
                continue
            for p in t.get("partitions", []):
                racks = sorted({r for n in p.get("replica_nodes", []) if (r := broker_rack.get(n))})
                part_rows.append(
                    {
                        "cluster": cluster_name,
                        "topic": t["name"],
                        "partition": p["partition_index"],
                        "replica_racks": racks,
                        "beginning_offset": None,
                        "end_offset": None,
                    }
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


def _describe_consumer_protocol_groups(
    bootstrap_servers: str, cluster: str, group_ids: Sequence[str], admin_config: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Groups on the KIP-848 consumer protocol, through ConsumerGroupDescribe (confluent-kafka's
    admin client; kafka-python does not implement that API).

    ``owned_partitions`` is the member's current assignment; ``protocol`` is the broker-side
    assignor the group uses (``uniform`` or ``range``, from ``group.remote.assignor``). ConsumerGroupDescribe
    returns subscribed topic names, but confluent-kafka does not expose them: ``topics`` is the
    set of topics in the member's current and target assignments (a subscribed topic with no
    partition for this member is missed).
    """
    try:
        from confluent_kafka import ConsumerGroupState
        from confluent_kafka.admin import AdminClient
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SnapshotError(
            f"{len(group_ids)} group(s) use the consumer group protocol (KIP-848), which needs "
            "confluent-kafka to describe (pip install 'kassign[confluent]')"
        ) from exc
    # confluent-kafka takes librdkafka's dotted keys; kafka-python style keys are not passed on.
    conf: dict[str, str | int | float | bool] = {"bootstrap.servers": bootstrap_servers}
    conf.update({k: v for k, v in admin_config.items() if "." in k})
    admin = AdminClient(conf)
    group_rows: list[dict[str, Any]] = []
    member_rows: list[dict[str, Any]] = []
    futures = admin.describe_consumer_groups(list(group_ids), request_timeout=30)
    for gid in group_ids:
        d = futures[gid].result()
        state = d.state.name.title() if isinstance(d.state, ConsumerGroupState) else str(d.state)
        group_rows.append(
            {
                "cluster": cluster,
                "group_id": gid,
                "state": state,
                "protocol_type": "consumer",
                "protocol": d.partition_assignor or "",
                "group_protocol": "consumer",
            }
        )
        for m in d.members:
            current = sorted((tp.topic, tp.partition) for tp in (m.assignment.topic_partitions if m.assignment else []))
            target = [tp.topic for tp in (m.target_assignment.topic_partitions if m.target_assignment else [])]
            member_rows.append(
                {
                    "cluster": cluster,
                    "group_id": gid,
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "host": m.host,
                    "rack": None,
                    "topics": sorted({t for t, _ in current} | set(target)),
                    "owned_partitions": [{"topic": t, "partition": p} for t, p in current],
                    "generation": -1,
                    "user_data": None,
                    "assignment_user_data": None,
                }
            )
    return group_rows, member_rows


def _member_row(cluster: str, group_id: str, protocol: str, m: dict[str, Any]) -> dict[str, Any]:
    topics: list[str] = []
    owned: list[dict[str, Any]] = []
    generation, rack, user_data, assignment_user_data = -1, None, None, None
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
            assignment_user_data = asg.user_data or None
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
        "assignment_user_data": assignment_user_data,
    }


def snapshot(bootstrap_servers: str, out: str, **kwargs: Any) -> dict[str, int]:
    """Collect a snapshot (see :func:`collect`) and write it to ``out``; return row counts."""
    tables = collect(bootstrap_servers, **kwargs)
    write(tables, out, source={"kind": "kafka", "bootstrap_servers": bootstrap_servers})
    return {name: t.num_rows for name, t in tables.items()}
