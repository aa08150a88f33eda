"""Pure-Python reference implementations (the oracle for differential tests and the "pure-Python
version" in benchmarks). Not part of the ``kassign`` package: this top-level package lives beside
``tests/`` and ``benches/``, and both import it from here (pytest puts the repository root on the
path, ``pyproject.toml``; the benches add it themselves).

``kassign_reference.assign`` has the signature of :func:`kassign.assign` and returns the same
assignment as the Rust core for ``sticky`` and ``cooperative-sticky`` (tests compare them on
random groups). It is readable rather than fast: see :mod:`kassign_reference.sticky` for the
algorithm.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kassign._types import Member, TopicPartition

from . import sticky
from ._problem import Problem

STRATEGIES = ("sticky", "cooperative-sticky")

__all__ = ["STRATEGIES", "assign"]


def assign(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    *,
    lags: Mapping[tuple[str, int], int] | None = None,
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
    **options: Any,
) -> dict[str, list[TopicPartition]]:
    """Pure-Python ``sticky`` / ``cooperative-sticky``; same contract as :func:`kassign.assign`."""
    from kassign import _core
    from kassign._inputs import check_members, check_partition_racks

    if not isinstance(strategy, str):
        raise TypeError(f"strategy: expected a str, got {type(strategy).__name__}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy: the reference implements {', '.join(STRATEGIES)}, not {strategy!r}")
    if options:
        raise TypeError(f"assign: strategy {strategy!r} takes no options, got {', '.join(sorted(options))}")
    checked = check_members(members)
    partitions = _core.check_partitions(partitions_per_topic)
    racks = check_partition_racks(partition_racks)
    prob = Problem(checked, partitions, racks)
    owner = sticky.assign(prob, cooperative=strategy == "cooperative-sticky")
    out: list[list[TopicPartition]] = [[] for _ in prob.ids]
    base = prob.topic_base
    for t, name in enumerate(prob.topics):
        for p in range(base[t], base[t + 1]):
            m = owner[p]
            if m >= 0:
                out[m].append(TopicPartition(name, p - base[t]))
    by_id = dict(zip(prob.ids, out))
    return {m: by_id[m] for m in checked}
