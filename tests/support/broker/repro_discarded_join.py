"""Smallest reproduction of a kafka-python 3.0.12 rebalance bug (RELIABILITY.md, "No flaky tests").

    .venv/bin/python tests/support/broker/repro_discarded_join.py [--pause 0.5] [--seconds 40]

kafka-python runs JoinGroup -> SyncGroup as a task on its IO thread. ``KafkaConsumer.poll(timeout_ms=T)``
waits for that task at most T ms (``BaseCoordinator.join_group_async``) and leaves it in flight when T
runs out. If the task *completes* before the application calls ``poll`` again, the next ``poll`` finds
it done and starts a new JoinGroup (``if self._join_task is None or self._join_task.is_done``),
throwing away the assignment the finished SyncGroup returned. The member then rejoins a group that
has just become stable; when it is the leader (or its metadata changed) the broker starts another
rebalance, which every other member must join again. With a poll loop that spends time between polls
(processing, or simply a loaded CPU), each rebalance has a good chance to produce the next one.

This script starts the real broker (tests/support/kafka_broker.py), creates a 4-partition topic and runs two
kafka-python consumers in one group with kafka-python's own ``range`` assignor (no kassign code):

* ``A`` joins first (leader) and polls with ``poll(timeout_ms=100)`` followed by ``--pause`` seconds
  of "processing" (a sleep), the way a consumer under load behaves;
* ``B`` joins 5 s later and polls continuously.

It counts, for every JoinGroup a consumer sends, whether the previous join task had already finished
successfully (a discarded assignment), and prints the group generations each consumer went through.
One member joining a stable group should take one rebalance (generation 1 -> 2). With ``--pause 0``
that is what happens; with ``--pause 0.5`` the discarded joins add rebalances, and the group may keep
rebalancing for as long as A keeps pausing.

Observation only: the consumers' coordinators are wrapped to *count* discarded joins; nothing in
kafka-python's behaviour is changed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS_DIR))

from support import kafka_broker as kb  # noqa: E402


def watch(consumer, name: str, log: list) -> None:
    """Record every JoinGroup attempt of ``consumer``'s coordinator, and whether it discards a
    finished, successful join (the bug)."""
    coord = consumer._coordinator
    manager = coord._manager
    original = manager.call_soon

    def call_soon(coro, *args):
        if getattr(coro, "__name__", "") == "_do_join_and_sync_async":
            prev = coord._join_task
            discarded = prev is not None and prev.is_done and prev.succeeded()
            log.append((time.time(), name, "join", coord._generation.generation_id, discarded))
        return original(coro, *args)

    manager.call_soon = call_soon


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pause", type=float, default=0.5, help="seconds A spends between polls")
    p.add_argument("--seconds", type=float, default=40.0, help="how long to run after B starts")
    args = p.parse_args()

    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    work = Path(tempfile.mkdtemp(prefix="kassign-repro-"))
    broker = kb.KafkaBroker(kb.broker_libs(), work)
    broker.start()
    stop = threading.Event()
    log: list = []
    gens: dict[str, list[int]] = {"A": [], "B": []}
    try:
        topic = broker.create_topic(broker.unique_name("repro"), partitions=4)
        group = broker.unique_name("repro-group")

        def consumer(name: str) -> KafkaConsumer:
            c = KafkaConsumer(
                topic,
                bootstrap_servers=broker.bootstrap,
                group_id=group,
                client_id=name,
                enable_auto_commit=False,
                session_timeout_ms=10000,
                heartbeat_interval_ms=1000,
                max_poll_interval_ms=60000,
                partition_assignment_strategy=[RangePartitionAssignor],
            )
            watch(c, name, log)
            return c

        def loop(name: str, pause: float) -> None:
            c = consumer(name)
            try:
                while not stop.is_set():
                    c.poll(timeout_ms=100)
                    g = c._coordinator._generation.generation_id
                    if g > 0 and (not gens[name] or gens[name][-1] != g):
                        gens[name].append(g)
                    if pause:
                        time.sleep(pause)
            finally:
                c.close(autocommit=False)

        a = threading.Thread(target=loop, args=("A", args.pause), daemon=True)
        a.start()
        time.sleep(5)
        b = threading.Thread(target=loop, args=("B", 0.0), daemon=True)
        b.start()
        time.sleep(args.seconds)
        stop.set()
        a.join(30)
        b.join(30)
    finally:
        broker.stop()

    joins = {n: sum(1 for _, w, *_ in log if w == n) for n in ("A", "B")}
    discarded = {n: sum(1 for _, w, _, _, d in log if w == n and d) for n in ("A", "B")}
    t0 = log[0][0] if log else 0.0
    for t, n, _, g, d in log:
        print(
            f"  {t - t0:6.2f}s {n} sends JoinGroup (local generation {g})"
            + ("  <- the previous join had finished: its assignment is discarded" if d else "")
        )
    print(f"pause between A's polls: {args.pause}s")
    for n in ("A", "B"):
        print(
            f"{n}: {joins[n]} JoinGroup requests, {discarded[n]} of them discarding a finished successful join; "
            f"generations seen: {gens[n]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
