"""The fleet evaluation's labels and result schema.

:func:`strategy_labels` names what the fleet can run (the strategies and lag-aware's modes),
:func:`strategy_call` turns a label into a strategy and its options, :func:`result_schema` is the
result's columns (defined in the core) and :func:`assignment_from_rows` reads a result row's
assignment back. The evaluation itself is the core's (:mod:`kassign.fleet.evaluate`). No Spark here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

import kassign
from kassign import TopicPartition


def result_schema(with_assignment: bool) -> pa.Schema:
    """The columns of the fleet evaluation's result, one row per (group, strategy), with the
    ``assignment`` column when asked. Defined once, in the core (``rust/python/src/fleet_arrow_out.rs``):
    identity and status, the groups table's state and protocols, the KIP-848 migration inputs
    (``group_protocol``, ``custom_user_data``), counts and their spread, the lag statistics
    (``sum_lag`` and ``max_lag`` as kafka-lag-exporter reports them, ``lag_vs_bound`` = busiest
    member lag / max(top partition lag, mean)), moves and kept partitions, rack locality,
    violations, timings and churn."""
    from .. import _core

    schema: pa.Schema = _core.fleet_result_schema(with_assignment)
    return schema


RESULT_SCHEMA = result_schema(False)
ASSIGNMENT_TYPE = result_schema(True).field("assignment").type


#: Fleet strategy labels beyond :data:`kassign.STRATEGIES`: lag-aware's other modes, so the report
#: compares them (the plain "lag-aware" label is the default mode, the proposal's text).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "lag-aware:per-topic": ("lag-aware", {"mode": "per-topic"}),
    "lag-aware:global": ("lag-aware", {"mode": "global"}),
    "lag-aware:sticky": ("lag-aware", {"sticky": True}),
}


def strategy_labels() -> tuple[str, ...]:
    """Every label the fleet can run in this build: the strategies, then the variants."""
    extra = tuple(v for v, (base, _) in VARIANTS.items() if base in kassign.STRATEGIES)
    return tuple(kassign.STRATEGIES) + extra


def strategy_call(label: str) -> tuple[str, dict[str, Any]]:
    """(strategy, options) of a fleet label (a strategy name or a :data:`VARIANTS` label)."""
    return VARIANTS.get(label, (label, {}))


def rows_to_table(rows: list[dict[str, Any]], with_assignment: bool) -> pa.Table:
    schema = result_schema(with_assignment)
    return pa.Table.from_pylist(rows, schema=schema)


def assignment_from_rows(rows: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, list[TopicPartition]]:
    """Rebuild ``{member: [TopicPartition]}`` from a result row's ``assignment`` column (members
    with no partitions are absent)."""
    entries = rows["assignment"] if isinstance(rows, Mapping) else rows
    out: dict[str, list[TopicPartition]] = {}
    for d in entries:
        out.setdefault(d["member_id"], []).append(TopicPartition(d["topic"], d["partition"]))
    return out
