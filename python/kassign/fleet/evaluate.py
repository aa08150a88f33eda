"""One group of the fleet job, evaluated in the Rust core: Arrow in, Arrow out.

The job's ``applyInArrow`` function hands the group's two pyarrow tables (members, partition side)
to :func:`evaluate_group_table`, which passes them to ``kassign._core.fleet_evaluate`` through the
Arrow C stream interface: no ``to_pylist``, no Python object per row. The core builds the group's
interned problem once, validates it once, runs the Rust strategies on it (range, roundrobin,
sticky, cooperative-sticky) with the GIL released, measures every result and replays churn,
reusing the problem for every strategy and round. The Python strategies (lag-aware, fair,
failover) are called back with ``kassign.Member`` objects built once per member from the decoded
rows, wrapped in one :class:`kassign.assignors._greedy.Inputs` per member set (every Python
strategy of a churn round shares its sorted ids, subscribers per topic and lag arrays; the core
derives the ids and subscribers from its interned problem), and return
owner arrays (:data:`kassign.assignors.PYTHON_OWNERS`), which the core measures the same way; the
sticky ones get the previous owners the core derives instead of members carrying owned partitions.
The result is a pyarrow table in :func:`kassign.fleet.group.result_schema` (the core's one
result schema: every column, the migration inputs and ``lag_vs_bound`` included).

The rules (which rows count, lags, metrics, error rows and their messages, the churn events) are
those of the Python reference the tests compare it with, row by row
(``tests/oracles/fleet_group.py``).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from .. import _core
from .._inputs import check_options
from .._types import Member
from ..assignors import PYTHON_OWNERS
from ..assignors._greedy import Inputs


def churn_seed(cluster: str, group_id: str, seed: int) -> int:
    """A per-group seed that is the same in every process (Python's hash() is not)."""
    return zlib.crc32(f"{cluster}\x00{group_id}\x00{seed}".encode())


def python_strategies(labels: Sequence[str]) -> dict[str, tuple[Callable[..., Any], bool]]:
    """The requested fleet labels whose strategy is written in Python: label -> (``owners_of`` with
    the label's options bound, checked once here, whether the result reads owned
    partitions/generations)."""
    from .group import strategy_call

    out: dict[str, tuple[Callable[..., Any], bool]] = {}
    for label in labels:
        name, options = strategy_call(label)
        if name in PYTHON_OWNERS:
            fn, reads = PYTHON_OWNERS[name]
            checked = check_options("fleet", name, True, options)
            out[label] = (functools.partial(fn, options=checked), reads(checked))
    return out


def evaluate_group_table(
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
    prepared: dict[str, tuple[Callable[..., Any], bool]] | None = None,
) -> pa.Table:
    """One row per strategy for this group (in ``strategies``' order): metrics, or status "error"
    with the reason, as a table; a group whose rows cannot form an input gets an error row for
    every strategy. ``prepared``: :func:`python_strategies` of ``strategies``, when the caller evaluates many
    groups with the same strategies (computed here otherwise)."""
    strategies = list(strategies)
    settings = _core_options(
        cluster, group_id, strategies, churn_rounds, with_assignment, auto_offset_reset, seed, prepared
    )
    return _core.fleet_evaluate(cluster, group_id, members_tbl, parts_tbl, strategies, settings)


def _core_options(
    cluster: str,
    group_id: str,
    strategies: list[str],
    churn_rounds: int,
    with_assignment: bool,
    auto_offset_reset: str,
    seed: int,
    prepared: dict[str, tuple[Callable[..., Any], bool]] | None,
) -> _core.EvalSettings:
    """The settings of the core's evaluation of a group (checked)."""
    if churn_rounds < 0:
        raise ValueError(f"churn_rounds: expected >= 0, got {churn_rounds}")
    return {
        "churn_rounds": churn_rounds,
        "churn_seed": churn_seed(cluster, group_id, seed),
        "with_assignment": with_assignment,
        "auto_offset_reset": auto_offset_reset,
        "python_strategies": python_strategies(strategies) if prepared is None else prepared,
        "member_class": Member,
        "inputs_class": Inputs,
    }


def evaluate_stream_group(
    group: pa.Table,
    index: Any,
    strategies: Sequence[str],
    *,
    churn_rounds: int = 0,
    with_assignment: bool = False,
    auto_offset_reset: str = "latest",
    seed: int = 0,
    prepared: dict[str, tuple[Callable[..., Any], bool]] | None = None,
) -> pa.Table:
    """:func:`evaluate_group_table` on one group's rows of the stream plan (``group``: its rows of
    the sorted stream, :mod:`kassign.fleet.stream`) with the task's ``index``
    (:func:`kassign.fleet.stream.stream_index`): the core reads the group's members, its
    subscribed topics' partitions and its committed offsets from them directly (no per-group
    pyarrow tables), with the rules of the tests' reference (``tests/oracles/fleet_stream.py``)
    followed by :func:`evaluate_group_table` (the tests compare the two)."""
    strategies = list(strategies)
    cluster = group.column("cluster")[0].as_py()
    group_id = group.column("group_id")[0].as_py()
    settings = _core_options(
        cluster, group_id, strategies, churn_rounds, with_assignment, auto_offset_reset, seed, prepared
    )
    return _core.fleet_evaluate_stream(cluster, group_id, group, index, strategies, settings)
