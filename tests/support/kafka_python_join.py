"""Keeps kafka-python 3.0.12 consumers from losing a finished group join (test harness work-around).

The defect (RELIABILITY.md, "No flaky tests"; reproduced by tests/support/broker/repro_discarded_join.py):
``KafkaConsumer.poll(timeout_ms=T)`` calls ``ConsumerCoordinator.poll`` with what is left of T, and the
coordinator waits at most that long for the JoinGroup -> SyncGroup task it runs on its IO thread,
leaving the task in flight when the time runs out. When the task *finishes* before the next call
reaches ``BaseCoordinator.join_group_async``, that call sees a done task and sends a new JoinGroup,
discarding the assignment the finished SyncGroup returned. The member rejoins a group that just
became stable; as the leader, or with changed metadata (cooperative members send their generation
and owned partitions), it makes the broker start another rebalance that every member must join
again. A poll loop that spends time between polls (processing, committing, throttling, a loaded
CPU), or whose ``poll`` has only a few milliseconds left when the coordinator notices a rebalance,
turns one rebalance into a chain of them.

Only the ``join_group_async`` call that is waiting when the join finishes ever applies it. So
:func:`install` makes every coordinator poll of one consumer wait up to :data:`JOIN_WAIT_MS` (instead
of what is left of the application's ``poll`` timeout): a join that the coordinator starts or finds
in flight is awaited until it is applied. It changes only how long the coordinator waits, and only
when it has something to wait for (a join, or finding the coordinator): with the member in a stable
group, ``poll`` returns as before. A join longer than :data:`JOIN_WAIT_MS` is awaited again by the
next poll; only if it finishes in the instant between two waits is it still lost, and
``on_lost`` reports that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Longest single wait of the coordinator for a join in flight. Longer than the session timeouts the
#: tests use, so a rebalance that waits for a dead member to expire still completes in one wait; it
#: also bounds how long a stop request (SIGTERM) can go unnoticed during a rebalance.
JOIN_WAIT_MS = 15000


def finished_join_unapplied(consumer: Any) -> bool:
    """A JoinGroup/SyncGroup finished successfully and no caller applied it: the next coordinator
    poll will discard it (the defect)."""
    task = consumer._coordinator._join_task
    return task is not None and task.is_done and task.succeeded()


def install(consumer: Any, on_lost: Callable[[], None] | None = None, wait: bool = True) -> None:
    """Make ``consumer``'s coordinator wait for group joins to finish (see the module docstring).
    ``on_lost`` is called whenever a coordinator poll finds a finished join unapplied (it is about to
    be discarded). ``wait=False`` only reports: kafka-python's behaviour, for the control runs."""
    coord = consumer._coordinator
    original = coord.poll

    def poll(timeout_ms: int | None = None) -> bool:
        if on_lost is not None and finished_join_unapplied(consumer):
            on_lost()
        if wait and timeout_ms is not None:
            timeout_ms = max(timeout_ms, JOIN_WAIT_MS)
        return original(timeout_ms=timeout_ms)

    coord.poll = poll
