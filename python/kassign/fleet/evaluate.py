"""One group of the fleet job, evaluated in the Rust core: Arrow in, Arrow out.

The job's ``applyInArrow`` function hands the group's two pyarrow tables (members, partition side)
to :func:`evaluate_group_table`, which passes them to ``kassign._core.fleet_evaluate`` through the
Arrow C stream interface: no ``to_pylist``, no Python object per row. The core builds the group's
interned problem once, validates it once, runs the Rust strategies on it (range, roundrobin,
sticky, cooperative-sticky) with the GIL released, measures every result and replays churn,
reusing the problem for every strategy and round. The Python strategies (lag-aware, fair,
failover) are called back with ``kassign.Member`` objects built once per member from the decoded
rows and return owner arrays (:data:`kassign.assignors.PYTHON_OWNERS`), which the core measures
the same way. The result is a pyarrow table in :func:`kassign.fleet.group.result_schema`.

The rules (which rows count, lags, metrics, error rows and their messages, the churn events) are
those of the Python reference, :func:`kassign.fleet.group.evaluate_group`; the tests compare the
two row by row.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Callable

import pyarrow as pa

from .. import _core
from .._types import Member, TopicPartition
from ..assignors import PYTHON_OWNERS


def churn_seed(cluster: str, group_id: str, seed: int) -> int:
    """A per-group seed that is the same in every process (Python's hash() is not)."""
    return zlib.crc32(f"{cluster}\x00{group_id}\x00{seed}".encode())


def python_strategies(strategies: Sequence[str]) -> dict[str, tuple[Callable[..., Any], bool]]:
    """The requested strategies that are written in Python: name -> (owners, reads_history)."""
    return {s: PYTHON_OWNERS[s] for s in strategies if s in PYTHON_OWNERS}


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
) -> pa.Table:
    """One row per strategy for this group (in ``strategies``' order): metrics, or status "error"
    with the reason. Same contract as :func:`kassign.fleet.group.evaluate_group`, as a table."""
    if churn_rounds < 0:
        raise ValueError(f"churn_rounds: expected >= 0, got {churn_rounds}")
    strategies = list(strategies)
    return _core.fleet_evaluate(
        cluster,
        group_id,
        members_tbl,
        parts_tbl,
        strategies,
        churn_rounds=churn_rounds,
        churn_seed=churn_seed(cluster, group_id, seed),
        with_assignment=with_assignment,
        auto_offset_reset=auto_offset_reset,
        python_strategies=python_strategies(strategies),
        member_class=Member,
        tp_class=TopicPartition,
    )
