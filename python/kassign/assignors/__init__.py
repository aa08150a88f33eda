"""Strategies implemented in Python on top of kassign's model.

``PYTHON_STRATEGIES`` maps a protocol name to a function with the signature
``fn(members: dict[str, Member], partitions_per_topic: dict[str, int], *, lags, partition_racks,
options) -> dict[str, list[TopicPartition]]``. Inputs and options are already checked by
:func:`kassign.assign` (:mod:`kassign._inputs`: ``partition_racks`` arrives as a list of (topic,
partition, racks), ``options`` as :func:`kassign._inputs.check_options` returns them).

``PYTHON_OWNERS`` maps the same names to ``(owners_of, reads_history)``: ``owners_of(inputs,
options)`` takes the arguments prepared once as a :class:`kassign.assignors._greedy.Inputs` and
returns the placement before its conversion to lists (topic -> ``array('i')``: the owner of each
partition as an index into ``sorted(members)``, -1 = unassigned); ``reads_history(options)``
(checked options) says whether the result depends on the members' owned partitions and
generation. The fleet job measures these directly, sharing one
``Inputs`` between every Python strategy of a churn round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import failover, fair, lag_aware

PYTHON_STRATEGIES: dict[str, Callable[..., Any]] = {
    lag_aware.NAME: lag_aware.assign,
    fair.NAME: fair.assign,
    failover.NAME: failover.assign,
}

PYTHON_OWNERS: dict[str, tuple[Callable[..., Any], Callable[[dict[str, Any]], bool]]] = {
    m.NAME: (m.owners_of, m.reads_history) for m in (lag_aware, fair, failover)
}
