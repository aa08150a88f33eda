"""``kassign snapshot``: collect a fleet snapshot from a live Kafka cluster (kafka-python's admin
client; confluent-kafka's for groups on the KIP-848 consumer protocol). The format is
:mod:`kassign.fleet.snapshot`'s (docs/fleet.md).

Member metadata and assignments are read from the raw DescribeGroups bytes with
:mod:`kassign.protocol`'s decoders (every ConsumerProtocol version, the rack field included).
DescribeGroups goes through kafka-python's network client (``kafka.net``: ``send`` and ``poll``),
batched per coordinator and pipelined, so the wire bytes arrive untouched. The connection
settings (TLS, SASL) come from :mod:`kassign.fleet.connect`, one mapping for both clients.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from ..protocol import decode_assignment, decode_generation, decode_sticky_user_data, decode_subscription
from .connect import ClientSettings, redacted_logs
from .snapshot import GROUPS_SCHEMA, MEMBERS_SCHEMA, OFFSETS_SCHEMA, PARTITIONS_SCHEMA, SnapshotError, write


def _progress(label: str, total: int, enabled: bool) -> Any:
    """A tqdm bar on stderr: a live bar on a terminal; otherwise plain ``label: n/total`` text at
    most every 10 s and at the end; nothing when ``enabled`` is false (``--quiet``)."""
    from tqdm import tqdm

    tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if tty:
        return tqdm(total=total, desc=label, file=sys.stderr, disable=not enabled, unit="", leave=True)
    return tqdm(
        total=total,
        desc=label,
        file=sys.stderr,
        disable=not enabled,
        ascii=True,
        mininterval=10.0,
        bar_format="{desc}: {n_fmt}/{total_fmt} [{elapsed}]",
    )


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


class CollectError(RuntimeError):
    """The cluster failed while the snapshot was being read (a broker went away, a request
    failed): nothing is written, no partial snapshot. One line, no secret."""


#: Groups per DescribeGroups request and coordinators per FindCoordinator request.
DESCRIBE_BATCH = 100
FIND_BATCH = 500
#: Requests in flight per broker connection (kafka-python's default limit).
IN_FLIGHT = 5
#: Group error codes that clear up by themselves: COORDINATOR_LOAD_IN_PROGRESS,
#: COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
_RETRIABLE = {14, 15, 16}
_GROUP_ID_NOT_FOUND = 69


def _settings(bootstrap: str | ClientSettings) -> ClientSettings:
    return bootstrap if isinstance(bootstrap, ClientSettings) else ClientSettings(bootstrap_servers=bootstrap)


class _Requests:
    """DescribeGroups and FindCoordinator through kafka-python's network client (``send`` /
    ``poll``, the public request API of ``kafka.net``): member metadata stays the wire bytes,
    requests are batched and pipelined, several in flight per broker."""

    def __init__(self, settings: ClientSettings, timeout_s: float) -> None:
        from kafka.net.compat import KafkaNetClient

        self.timeout_s = timeout_s
        self.client = KafkaNetClient(**settings.kafka_python(timeout_s))
        self.client.get_broker_version(timeout_ms=int(timeout_s * 1000))

    def close(self) -> None:
        self.client.close()

    def run(self, requests: list[tuple[int | None, Any]], what: str) -> list[Any]:
        """Send ``(node_id, request)`` pairs (``None``: any broker), at most :data:`IN_FLIGHT`
        per broker at a time; the responses in order. A failed request or a broker that does not
        answer within the timeout raises :class:`CollectError`."""
        out: list[Any] = [None] * len(requests)
        pending = list(enumerate(requests))
        flying: dict[int, tuple[int, Any]] = {}
        per_node: dict[Any, int] = {}
        deadline = time.monotonic() + self.timeout_s
        while pending or flying:
            rest = []
            for i, (node, req) in pending:
                node = node if node is not None else self.client.least_loaded_node(bootstrap_fallback=True)
                if per_node.get(node, 0) >= IN_FLIGHT:
                    rest.append((i, (node, req)))
                    continue
                per_node[node] = per_node.get(node, 0) + 1
                flying[i] = (node, self.client.send(node, req))
            pending = rest
            self.client.poll(timeout_ms=50)
            for i, (node, fut) in list(flying.items()):
                if not fut.is_done:
                    continue
                del flying[i]
                per_node[node] -= 1
                if fut.failed():
                    exc = fut.exception
                    raise CollectError(f"{what}: broker {node} failed: {type(exc).__name__}: {exc} (nothing written)")
                out[i] = fut.value
            if time.monotonic() > deadline and (pending or flying):
                nodes = sorted({str(n) for n, _ in flying.values()} | {str(r[0]) for _, r in pending})
                raise CollectError(f"{what}: broker(s) {', '.join(nodes)} did not answer within {self.timeout_s:g}s")
        return out

    def coordinators(self, group_ids: Sequence[str]) -> dict[str, int]:
        """Each group's coordinator (FindCoordinator v4+, many keys per request)."""
        from kafka.protocol.metadata import FindCoordinatorRequest

        found: dict[str, int] = {}
        todo = list(group_ids)
        deadline = time.monotonic() + self.timeout_s
        while todo:
            reqs: list[tuple[int | None, Any]] = [
                (None, FindCoordinatorRequest(key_type=0, coordinator_keys=list(c), min_version=4))
                for c in _chunks(todo, FIND_BATCH)
            ]
            retry = []
            for resp in self.run(reqs, "find group coordinators"):
                for c in resp.coordinators:
                    if c.error_code == 0:
                        found[c.key] = c.node_id
                    elif c.error_code in _RETRIABLE:
                        retry.append(c.key)
                    else:
                        raise CollectError(f"find the coordinator of group {c.key!r}: {_error_name(c.error_code)}")
            if retry and time.monotonic() > deadline:
                raise CollectError(
                    f"no coordinator for {len(retry)} group(s) within {self.timeout_s:g}s, e.g. {retry[0]!r}"
                )
            if retry:
                time.sleep(0.2)
            todo = retry
        return found

    def describe(self, group_ids: Sequence[str], bar: Any) -> dict[str, Any]:
        """DescribeGroups of ``group_ids`` (batched per coordinator, pipelined): group id ->
        the response's group entry, member metadata and assignment as bytes."""
        from kafka.protocol.admin import DescribeGroupsRequest

        described: dict[str, Any] = {}  # None: the group does not exist (GROUP_ID_NOT_FOUND)
        todo = list(group_ids)
        deadline = time.monotonic() + self.timeout_s
        while todo:
            coord = self.coordinators(todo)
            by_node: dict[int, list[str]] = {}
            for gid in todo:
                by_node.setdefault(coord[gid], []).append(gid)
            reqs: list[tuple[int | None, Any]] = [
                (node, DescribeGroupsRequest(groups=list(c), include_authorized_operations=False))
                for node, gids in by_node.items()
                for c in _chunks(gids, DESCRIBE_BATCH)
            ]
            retry = []
            for (_, req), resp in zip(reqs, self.run(reqs, "describe groups")):
                got = {g.group_id: g for g in resp.groups}
                for gid in req.groups:
                    g = got.get(gid)
                    if g is None:
                        raise CollectError(f"describe groups: the broker's answer misses group {gid!r}")
                    if g.error_code in _RETRIABLE:
                        retry.append(gid)
                    elif g.error_code == _GROUP_ID_NOT_FOUND:
                        # gone since ListGroups (or never there): recorded as Dead, like DescribeGroups
                        # v0-v5 answer, with no members
                        described[gid] = None
                        bar.update(1)
                    elif g.error_code:
                        raise CollectError(f"describe group {gid!r}: {_error_name(g.error_code)}")
                    else:
                        described[gid] = g
                        bar.update(1)
            if retry and time.monotonic() > deadline:
                raise CollectError(f"describe groups: {len(retry)} group(s) kept moving coordinator, e.g. {retry[0]!r}")
            if retry:
                time.sleep(0.2)
            todo = retry
        return described


def _error_name(code: int) -> str:
    import kafka.errors as Errors

    return str(Errors.for_code(code).__name__)


def _chunks(items: Sequence[Any], n: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def collect(
    bootstrap_servers: str | ClientSettings,
    *,
    cluster: str | None = None,
    groups: Sequence[str] | None = None,
    progress: bool = True,
    timeout: float = 30.0,
) -> dict[str, pa.Table]:
    """Read the consumer groups, members, partitions and offsets of one Kafka cluster.

    Arguments:
        bootstrap_servers: ``host:port[,host:port]`` of a PLAINTEXT listener, or the
            :class:`~kassign.fleet.connect.ClientSettings` of any listener (TLS, SASL).
        cluster: the snapshot's cluster name (default: the cluster id the brokers report).
        groups: only these group ids (default: every consumer group).
        timeout: seconds each step may wait for the brokers.

    Members' ``owned_partitions`` are their current assignment (DescribeGroups member
    assignment); ``generation`` comes from the subscription (v2+) or the cooperative-sticky /
    sticky user data; ``rack`` from the subscription (v3). Offsets: committed offsets of each
    group; beginning/end offsets of every partition some group subscribes to or commits to.

    Any failure raises :class:`CollectError` (one line naming the step): a snapshot is whole or
    not written.
    """
    # import the clients first: their loggers must exist when redacted_logs looks for them
    import kafka.admin.client
    import kafka.net.compat  # noqa: F401
    from kafka.errors import KafkaError

    settings = _settings(bootstrap_servers)
    step = ["cluster metadata"]
    with redacted_logs(settings):
        try:
            return _collect(settings, cluster, groups, progress, timeout, step)
        except KafkaError as e:  # a client's error mid-way: one line naming the step
            msg = str(e)
            if not msg.startswith(type(e).__name__):
                msg = f"{type(e).__name__}: {msg}"
            raise CollectError(f"{step[0]}: {settings.redact(msg)} (nothing written)") from None


def _collect(
    settings: ClientSettings,
    cluster: str | None,
    groups: Sequence[str] | None,
    progress: bool,
    timeout: float,
    step: list[str],
) -> dict[str, pa.Table]:
    from kafka import KafkaAdminClient
    from kafka.protocol.consumer import OffsetSpec
    from kafka.structs import TopicPartition as KTP

    admin = KafkaAdminClient(**settings.kafka_python(timeout))
    requests: _Requests | None = None
    try:
        meta = admin.describe_cluster()
        cluster_name = cluster or meta.get("cluster_id") or settings.bootstrap_servers
        broker_rack = {b["broker_id"]: b.get("rack") for b in meta.get("brokers", [])}
        step[0] = "list groups"
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
        step[0] = "describe groups"
        with _progress("describe groups", len(group_ids) + len(modern), progress) as bar:
            if group_ids:
                requests = _Requests(settings, timeout)
                described = requests.describe(group_ids, bar)
            else:
                described = {}
            for gid in group_ids:
                d = described[gid]
                if d is None:
                    group_rows.append(
                        {
                            "cluster": cluster_name,
                            "group_id": gid,
                            "state": "Dead",
                            "protocol_type": "",
                            "protocol": "",
                            "group_protocol": group_type.get(gid),
                        }
                    )
                    continue
                protocol = d.protocol_data or ""
                group_rows.append(
                    {
                        "cluster": cluster_name,
                        "group_id": gid,
                        "state": d.group_state,
                        "protocol_type": d.protocol_type,
                        "protocol": protocol,
                        "group_protocol": group_type.get(gid),
                    }
                )
                for m in d.members:
                    member_rows.append(_member_row(cluster_name, gid, protocol, _member_dict(m)))
            if modern:
                g_rows, m_rows = _describe_consumer_protocol_groups(settings, cluster_name, modern, timeout)
                group_rows += g_rows
                member_rows += m_rows
                bar.update(len(modern))
        group_ids = sorted(group_ids + modern)

        offset_rows: list[dict[str, Any]] = []
        step[0] = "committed offsets"
        with _progress("committed offsets", len(group_ids), progress) as bar:
            for chunk in _chunks(group_ids, 50):
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

        topics = sorted({t for r in member_rows for t in r["topics"]} | {r["topic"] for r in offset_rows})
        step[0] = "describe topics"
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
        begin: dict[Any, int] = {}
        end: dict[Any, int] = {}
        step[0] = "log offsets"
        with _progress("log offsets", len(tps), progress) as bar:
            for chunk in _chunks(tps, 500):
                b = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in chunk})
                e = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in chunk})
                begin.update({tp: v.offset for tp, v in b.items()})
                end.update({tp: v.offset for tp, v in e.items()})
                bar.update(len(chunk))
        for row, tp in zip(part_rows, tps):
            row["beginning_offset"] = begin.get(tp)
            row["end_offset"] = end.get(tp)
    finally:
        if requests is not None:
            requests.close()
        admin.close()
    return {
        "members": pa.Table.from_pylist(member_rows, schema=MEMBERS_SCHEMA),
        "partitions": pa.Table.from_pylist(part_rows, schema=PARTITIONS_SCHEMA),
        "offsets": pa.Table.from_pylist(offset_rows, schema=OFFSETS_SCHEMA),
        "groups": pa.Table.from_pylist(group_rows, schema=GROUPS_SCHEMA),
    }


def _member_dict(m: Any) -> dict[str, Any]:
    """A DescribeGroups member entry as the dict :func:`_member_row` reads (bytes kept)."""
    return {
        "member_id": m.member_id,
        "group_instance_id": getattr(m, "group_instance_id", None),
        "client_id": m.client_id,
        "client_host": m.client_host,
        "member_metadata": _as_bytes(m.member_metadata),
        "member_assignment": _as_bytes(m.member_assignment),
    }


def _describe_consumer_protocol_groups(
    settings: ClientSettings, cluster: str, group_ids: Sequence[str], timeout: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Groups on the KIP-848 consumer protocol, through ConsumerGroupDescribe (confluent-kafka's
    admin client; kafka-python does not implement that API).

    ``owned_partitions`` is the member's current assignment; ``protocol`` is the broker-side
    assignor the group uses (``uniform`` or ``range``, from ``group.remote.assignor``). ConsumerGroupDescribe
    returns subscribed topic names, but confluent-kafka does not expose them: ``topics`` is the
    set of topics in the member's current and target assignments (a subscribed topic with no
    partition for this member is missed).
    """
    import logging

    try:
        from confluent_kafka import ConsumerGroupState
        from confluent_kafka.admin import AdminClient
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SnapshotError(
            f"{len(group_ids)} group(s) use the consumer group protocol (KIP-848), which needs "
            "confluent-kafka to describe (pip install 'kassign[snapshot]')"
        ) from exc
    quiet = logging.getLogger("kassign.fleet.collect.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    conf = settings.librdkafka(timeout)
    conf["logger"] = quiet
    admin = AdminClient(conf)
    group_rows: list[dict[str, Any]] = []
    member_rows: list[dict[str, Any]] = []
    futures = admin.describe_consumer_groups(list(group_ids), request_timeout=timeout)
    for gid in group_ids:
        try:
            d = futures[gid].result()
        except Exception as e:  # confluent_kafka.KafkaException
            raise CollectError(f"describe group {gid!r} (consumer protocol): {settings.redact(str(e))}") from None
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


def snapshot(bootstrap_servers: str | ClientSettings, out: str, **kwargs: Any) -> dict[str, int]:
    """Collect a snapshot (see :func:`collect`) and write it to ``out``; return row counts.
    ``snapshot.json`` records the connection without credentials
    (:meth:`~kassign.fleet.connect.ClientSettings.source`)."""
    settings = _settings(bootstrap_servers)
    tables = collect(settings, **kwargs)
    write(tables, out, source=settings.source())
    return {name: t.num_rows for name, t in tables.items()}
