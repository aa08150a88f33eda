"""A poll for kafka-python 3.0.12 consumers that never loses a finished group join.

The defect (RELIABILITY.md, "No flaky tests"; reproduced by tests/broker/repro_discarded_join.py):
``KafkaConsumer.poll(timeout_ms=T)`` waits at most T ms for the JoinGroup -> SyncGroup task it runs on
its IO thread and leaves the task in flight when T runs out. When the task *finishes* before the
next call reaches ``BaseCoordinator.join_group_async``, that call sees a done task and sends a new
JoinGroup, discarding the assignment the finished SyncGroup returned. The member rejoins a group
that just became stable; as the leader, or with changed metadata (cooperative members send their
generation and owned partitions), it makes the broker start another rebalance that every member
must join again. A poll loop that spends time between polls (processing, committing, throttling,
or a loaded CPU) turns one rebalance into a chain of them.

The only code path that applies a finished join is the ``join_group_async`` call that is waiting
on it when it finishes, so the work-around keeps one waiting for as long as a join is in flight:

* before polling for records, a member that must rejoin finishes the whole join in
  ``coordinator.poll`` (bounded waits, repeated back to back while the join is in flight);
* if ``KafkaConsumer.poll`` itself started a join and gave up on it (it then returns no records),
  the same loop takes over at once.

What is left is the gap between two back-to-back waits (microseconds, against waits of
``JOIN_WAIT_MS``), instead of the whole time between two polls.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

#: One bounded wait for an in-flight join. Waits are repeated while the join is in flight, so this
#: only bounds how long a stop request (SIGTERM) can go unnoticed during a rebalance.
JOIN_WAIT_MS = 5000


def join_in_flight(consumer: Any) -> bool:
    """A JoinGroup -> SyncGroup that no caller has applied yet (or a pending need to rejoin)."""
    coord = consumer._coordinator
    return coord._join_task is not None or coord.need_rejoin()


def finish_join(consumer: Any, stop: Optional[threading.Event] = None,
                on_lost: Optional[Callable[[], None]] = None) -> None:
    """Keep a ``join_group_async`` call waiting until the member is in the group again.

    ``on_lost`` is called when a finished join is found unapplied (kafka-python is about to discard
    it): the defect happened anyway, in the gap between two waits. It is only reported."""
    coord = consumer._coordinator
    while join_in_flight(consumer) and not (stop is not None and stop.is_set()):
        task = coord._join_task
        if on_lost is not None and task is not None and task.is_done and task.succeeded():
            on_lost()
        coord.poll(timeout_ms=JOIN_WAIT_MS)


def poll(consumer: Any, timeout_ms: int, max_records: Optional[int] = None,
         stop: Optional[threading.Event] = None, on_lost: Optional[Callable[[], None]] = None) -> dict:
    """``consumer.poll(timeout_ms, max_records)`` that leaves no finished join to be discarded."""
    finish_join(consumer, stop, on_lost)
    batch = consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
    if consumer._coordinator._join_task is not None:
        # poll started a join and gave up waiting on it (so it returned no records): finish it now.
        finish_join(consumer, stop, on_lost)
    return batch
