"""The Python reference of the fleet's per-group evaluation (formerly in
``kassign/fleet/group.py``): :func:`evaluate_group` is the evaluation written with kassign's public
API: rows -> ``kassign.Member`` objects (:func:`build_group`), :func:`kassign.assign` for each
strategy, the Python metrics (:mod:`oracles.quality`), the Python churn replay
(:mod:`oracles.fleet_churn`). The job runs the core's evaluation
(:mod:`kassign.fleet.evaluate`); the tests compare the two row by row (test_fleet_evaluate.py).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

import kassign
from kassign import Member, TopicPartition, _core
from kassign.fleet.group import RESULT_SCHEMA, strategy_call
from oracles import quality
from oracles.fleet_churn import replay

#: Columns of the member side of a group (the snapshot's members table).
MEMBER_COLUMNS = (
    "member_id",
    "group_instance_id",
    "client_id",
    "host",
    "rack",
    "topics",
    "owned_partitions",
    "generation",
    "user_data",
    "assignment_user_data",
)
#: Columns of the partition side: the group's partitions joined with its committed offsets, plus
#: one marker row per known group (``topic`` null) that carries the groups table's state/protocol.
PARTITION_COLUMNS = (
    "topic",
    "partition",
    "replica_racks",
    "beginning_offset",
    "end_offset",
    "committed",
    "state",
    "protocol",
    "group_protocol",
)


class GroupInputError(ValueError):
    """The snapshot rows of one group cannot form a valid kassign input."""


def core_partition_lag(
    committed: int | None, beginning: int | None, end: int | None, auto_offset_reset: str = "latest"
) -> int:
    """Lag by the core's rule (``rust/core/src/lag.rs``, docs/strategies/lag-aware.md): the next offset
    is the committed one (a committed offset below the log start counts from the log start); with
    no committed offset, the end when ``auto_offset_reset`` is "latest", else the beginning. Lag =
    max(end - next, 0); missing beginning/end offsets count as 0."""
    return _core.compute_lag(committed, beginning, end, auto_offset_reset)


def lag_function() -> tuple[Callable[..., int], str]:
    """The per-partition lag function ``fn(committed, beginning, end, auto_offset_reset)`` and
    where it comes from."""
    return core_partition_lag, "the core's lag rule (rust/core/src/lag.rs)"


@dataclass
class GroupInput:
    """kassign inputs of one group, plus group-level lag statistics."""

    members: dict[str, Member]
    partitions_per_topic: dict[str, int]
    lags: dict[tuple[str, int], int]
    partition_racks: dict[tuple[str, int], list[str]]
    topics: int = 0
    missing_topics: int = 0
    sum_lag: int = 0
    max_lag: int = 0
    uncommitted: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _columns(table: pa.Table, names: Sequence[str]) -> dict[str, list[Any]]:
    n = table.num_rows
    return {c: table.column(c).to_pylist() if c in table.column_names else [None] * n for c in names}


def group_meta(parts: pa.Table) -> tuple[str | None, str | None]:
    """(state, protocol) from the group's marker rows, when the snapshot has a groups table."""
    cols = _columns(parts, ("topic", "state", "protocol"))
    state = protocol = None
    for t, s, p in zip(cols["topic"], cols["state"], cols["protocol"]):
        if t is None:
            state = state or s
            protocol = protocol or p
    return state, protocol


def migration_meta(members_tbl: pa.Table, parts_tbl: pa.Table) -> dict[str, Any]:
    """The group protocol (marker rows) and how many members' current assignments carry user data."""
    cols = _columns(parts_tbl, ("topic", "group_protocol"))
    gp = next((g for t, g in zip(cols["topic"], cols["group_protocol"]) if t is None and g), None)
    ud = _columns(members_tbl, ("assignment_user_data",))["assignment_user_data"]
    return {"group_protocol": gp, "custom_user_data": sum(1 for u in ud if u)}


def build_group(
    members_tbl: pa.Table,
    parts_tbl: pa.Table,
    *,
    auto_offset_reset: str = "latest",
    lag_fn: Callable[..., int] | None = None,
) -> GroupInput:
    """Turn one group's snapshot rows into kassign inputs.

    Raises:
        GroupInputError: no members, a member without id, duplicate member ids, a member without a
            subscription, or a field kassign.Member rejects (the message names it).
    """
    if members_tbl.num_rows == 0:
        raise GroupInputError("group has no members (nothing to assign)")
    m = _columns(members_tbl, MEMBER_COLUMNS)
    members: dict[str, Member] = {}
    for i, mid in enumerate(m["member_id"]):
        if mid is None or mid == "":
            raise GroupInputError(f"member row {i}: member_id is null or empty")
        if mid in members:
            raise GroupInputError(f"member {mid!r}: duplicate member_id")
        topics = m["topics"][i]
        if topics is None:
            raise GroupInputError(f"member {mid!r}: topics (subscription) is null")
        owned = m["owned_partitions"][i] or ()
        gen = m["generation"][i]
        try:
            members[mid] = Member(
                topics,
                owned_partitions=[(d["topic"], d["partition"]) for d in owned],
                generation=-1 if gen is None else gen,
                rack=m["rack"][i] or None,
                group_instance_id=m["group_instance_id"][i],
                user_data=m["user_data"][i],
            )
        except (TypeError, ValueError) as e:
            raise GroupInputError(f"member {mid!r}: {e}") from None

    subscribed: set[str] = set()
    for mem in members.values():
        subscribed.update(mem.topics)
    p = _columns(parts_tbl, ("topic", "partition", "replica_racks", "beginning_offset", "end_offset", "committed"))
    fn = lag_fn or lag_function()[0]
    partitions_per_topic: dict[str, int] = {}
    lags: dict[tuple[str, int], int] = {}
    racks: dict[tuple[str, int], list[str]] = {}
    sum_lag = max_lag = uncommitted = 0
    for t, part, rk, begin, end, c in zip(
        p["topic"], p["partition"], p["replica_racks"], p["beginning_offset"], p["end_offset"], p["committed"]
    ):
        if t is None or t not in subscribed or part is None or part < 0:
            continue
        key = (t, part)
        if key in lags:  # duplicate rows (e.g. two committed offsets): keep the first
            continue
        if part + 1 > partitions_per_topic.get(t, 0):
            partitions_per_topic[t] = part + 1
        lag = fn(c, begin, end, auto_offset_reset)
        lags[key] = lag
        if c is None or c < 0:
            uncommitted += 1  # left out of sums (kafka-lag-exporter)
        else:
            sum_lag += lag
            if lag > max_lag:
                max_lag = lag
        if rk:
            racks[key] = list(rk)
    return GroupInput(
        members=members,
        partitions_per_topic=partitions_per_topic,
        lags=lags,
        partition_racks=racks,
        topics=len(subscribed),
        missing_topics=len(subscribed - set(partitions_per_topic)),
        sum_lag=sum_lag,
        max_lag=max_lag,
        uncommitted=uncommitted,
    )


def _seed(cluster: str, group_id: str, seed: int) -> int:
    """A per-group seed that is the same in every process (Python's hash() is not)."""
    return zlib.crc32(f"{cluster}\x00{group_id}\x00{seed}".encode())


def run_strategy(strategy: str, g: GroupInput) -> tuple[dict[str, list[TopicPartition]], float]:
    """kassign.assign on the group; returns (assignment, milliseconds)."""
    name, options = strategy_call(strategy)
    t0 = time.perf_counter()
    result = kassign.assign(
        name, g.members, g.partitions_per_topic, lags=g.lags, partition_racks=g.partition_racks, **options
    )
    return result, (time.perf_counter() - t0) * 1000.0


_NULL_ROW: dict[str, Any] = {f.name: None for f in RESULT_SCHEMA}


def _empty_row(cluster: str, group_id: str, strategy: str) -> dict[str, Any]:
    row = dict(_NULL_ROW)
    row.update(cluster=cluster, group_id=group_id, strategy=strategy)
    return row


def evaluate_group(
    cluster: str,
    group_id: str,
    members_tbl: pa.Table,
    parts_tbl: pa.Table,
    strategies: Sequence[str],
    *,
    churn_rounds: int = 0,
    with_assignment: bool = False,
    auto_offset_reset: str = "latest",
    seed: int = 0,
    lag_fn: Callable[..., int] | None = None,
) -> list[dict[str, Any]]:
    """One row per strategy for this group: metrics, or status "error" with the reason.

    A group whose rows cannot form an input (no members, bad member rows) gets an error row for
    every strategy; a strategy that raises gets an error row of its own. Nothing is dropped.
    """
    state, protocol = group_meta(parts_tbl)
    mig = migration_meta(members_tbl, parts_tbl)
    try:
        g = build_group(members_tbl, parts_tbl, auto_offset_reset=auto_offset_reset, lag_fn=lag_fn)
    except GroupInputError as e:
        rows = []
        for s in strategies:
            row = _empty_row(cluster, group_id, s)
            row.update(
                status="error",
                error=str(e),
                state=state,
                current_protocol=protocol,
                members=members_tbl.num_rows,
                **mig,
            )
            rows.append(row)
        return rows
    previous = quality.previous_owners(g.members)
    assignable = quality.assignable_partitions(g.members, g.partitions_per_topic)
    bound = quality.lag_ratio_bound(g.members, g.partitions_per_topic, g.lags)
    rows = []
    for s in strategies:
        row = _empty_row(cluster, group_id, s)
        row.update(mig)
        row.update(
            state=state,
            current_protocol=protocol,
            members=len(g.members),
            topics=g.topics,
            missing_topics=g.missing_topics,
            sum_lag=g.sum_lag,
            max_lag=g.max_lag,
            uncommitted=g.uncommitted,
        )
        try:
            result, ms = run_strategy(s, g)
            q = quality.evaluate(
                g.members,
                g.partitions_per_topic,
                result,
                lags=g.lags,
                partition_racks=g.partition_racks,
                previous=previous,
                assignable=assignable,
                lag_bound=bound,
            )
            row.update(q.as_dict())
            row.update(status="ok", time_ms=ms)
            if q.lag_ratio is not None and q.lag_ratio_bound:
                row["lag_vs_bound"] = q.lag_ratio / q.lag_ratio_bound
            if churn_rounds > 0:
                name, options = strategy_call(s)
                c = replay(
                    name,
                    g.members,
                    g.partitions_per_topic,
                    result,
                    events=_core.churn_events(list(g.members), churn_rounds, _seed(cluster, group_id, seed)),
                    lags=g.lags,
                    partition_racks=g.partition_racks,
                    options=options,
                )
                row.update(
                    churn_rounds=c.rounds, churn_rebalances=c.rebalances, churn_moves=c.moves, churn_time_ms=c.time_ms
                )
            if with_assignment:
                row["assignment"] = [
                    {"member_id": mid, "topic": tp[0], "partition": tp[1]} for mid, tps in result.items() for tp in tps
                ]
        except Exception as e:  # a strategy failure is reported for this group, never fatal
            row = _empty_row(cluster, group_id, s)
            row.update(
                status="error",
                error=f"{s}: {type(e).__name__}: {e}",
                state=state,
                current_protocol=protocol,
                members=len(g.members),
                **mig,
            )
        rows.append(row)
    return rows
