"""One consumer-group member for the broker tests, run as a subprocess.

    python tests/support/consumer_worker.py --bootstrap 127.0.0.1:PORT --group G --topics a,b \
        --client kafka-python --strategy cooperative-sticky --name w1 --events w1.jsonl

Joins ``G`` with a kassign assignor (``--client kafka-python`` or ``aiokafka``; ``--builtin`` uses
the client's own assignor instead), consumes numbered messages (values b"0", b"1", ...) at a bounded
rate and writes JSON lines to ``--events`` (flushed line by line, before offsets are committed, so a
SIGKILL never loses a consumed message from the log):

* ``start`` / ``closed``: process lifetime; ``released`` (with its partitions) just before a graceful
  close (SIGTERM), i.e. before it leaves the group;
* ``assigned`` / ``revoked`` / ``lost``: the rebalance-listener callbacks, with their partitions;
* ``led``: this member's assignor ran the group assignment (it is the leader);
* ``joining``: the client asked the assignor for its JoinGroup metadata (kafka-python instances);
* ``join-discarded``: kafka-python found a finished JoinGroup/SyncGroup nobody applied and is about to
  send a new JoinGroup instead (the defect worked around by tests/support/kafka_python_join.py);
* ``tick``: every ``--tick`` seconds, generation, member id and the current assignment;
* ``records``: the numbered values consumed by one poll.

The process stops on SIGTERM (graceful close) or after ``--max-runtime`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

_STOP = threading.Event()


class EventLog:
    def __init__(self, path: str, name: str) -> None:
        self.fh = open(path, "a", buffering=1)
        self.name = name
        self.lock = threading.Lock()

    def write(self, ev: str, **fields: Any) -> None:
        rec = {"ev": ev, "w": self.name, "t": time.time(), **fields}
        line = json.dumps(rec, separators=(",", ":"))
        with self.lock:
            self.fh.write(line + "\n")
            self.fh.flush()


def _parts(tps: Any) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in tps)


def _assignors(args: argparse.Namespace, log: EventLog) -> list[Any]:
    """The configured assignors in preference order (``--strategy a,b``: the JoinGroup protocol
    list), each wrapped so that running the group assignment is logged. An entry ``builtin:NAME``
    is the client's own assignor and ``kassign:NAME`` kassign's; a bare ``NAME`` is the client's own
    with ``--builtin``, kassign's otherwise."""
    out = []
    for entry in args.strategy.split(","):
        source, _, name = entry.strip().rpartition(":")
        if source not in ("", "builtin", "kassign"):
            raise SystemExit(f"bad --strategy entry {entry!r}: expected NAME, builtin:NAME or kassign:NAME")
        builtin = source == "builtin" or (source == "" and args.builtin)
        out.append(_assignor(args, log, name, builtin))
    return out


def _assignor(args: argparse.Namespace, log: EventLog, strategy: str, builtin: bool) -> Any:
    if args.client == "kafka-python":
        if builtin:
            from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor as KPCoop
            from kafka.coordinator.assignors.range import RangePartitionAssignor
            from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
            from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

            base = {
                "range": RangePartitionAssignor,
                "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor,
                "cooperative-sticky": KPCoop,
            }[strategy]
        else:
            import kassign.kafka_python as mod

            base = _kassign_class(mod, strategy)
    else:
        if builtin:
            from aiokafka.coordinator.assignors.range import RangePartitionAssignor
            from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
            from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

            base = {
                "range": RangePartitionAssignor,
                "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor,
            }[strategy]
        else:
            import kassign.aiokafka as mod

            base = _kassign_class(mod, strategy)

    kwargs: dict[str, Any] = {}
    if args.priority is not None:
        kwargs["priority"] = args.priority
    if args.rack:
        kwargs["rack"] = args.rack
    if builtin and args.client == "aiokafka":
        # aiokafka's own assignors are used as classes (classmethods).
        def class_assign(cls: Any, cluster: Any, members: Any) -> Any:
            return _timed(log, lambda: super(logged, cls).assign(cluster, members), len(members))

        logged = type("Logged" + base.__name__, (base,), {"assign": classmethod(class_assign)})
        return logged

    def assign(self: Any, cluster: Any, members: Any) -> Any:
        return _timed(log, lambda: super(logged, self).assign(cluster, members), len(members))

    def metadata(self: Any, topics: Any) -> Any:
        log.write("joining")  # the client builds its JoinGroup request right after this
        return super(logged, self).metadata(topics)

    logged = type("Logged" + base.__name__, (base,), {"assign": assign, "metadata": metadata})
    return logged(**kwargs)


def _timed(log: EventLog, fn: Any, n: int) -> Any:
    started = time.time()
    result = fn()
    log.write("led", members=n, seconds=time.time() - started)
    return result


def _kassign_class(mod: Any, strategy: str) -> Any:
    for obj in vars(mod).values():
        if isinstance(obj, type) and getattr(obj, "strategy", None) == strategy and obj.__module__ == mod.__name__:
            return obj
    raise SystemExit(f"no kassign assignor for {strategy!r} in {mod.__name__}")


def _throttle(started: float, consumed: int, rate: float) -> None:
    if rate > 0:
        ahead = consumed / rate - (time.monotonic() - started)
        if ahead > 0:
            time.sleep(min(ahead, 0.2))


def run_kafka_python(args: argparse.Namespace, log: EventLog) -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer
    from kafka.errors import KafkaError

    from support import kafka_python_join

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            log.write("revoked", parts=_parts(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            log.write("assigned", parts=_parts(assigned))

        def on_partitions_lost(self, lost: Any) -> None:
            log.write("lost", parts=_parts(lost))

    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=args.name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=max(args.session_timeout_ms // 6, 200),
        max_poll_interval_ms=60000,
        max_poll_records=args.max_poll_records,
        partition_assignment_strategy=_assignors(args, log),
        metadata_max_age_ms=5000,
        retry_backoff_ms=100,
        client_rack=args.rack or "",
        group_instance_id=args.group_instance_id,
    )
    # Know every topic's partitions before joining: a leader without metadata assigns nothing for
    # a topic and the group needs an extra rebalance (more chances to miss one under load).
    for topic in args.topics.split(","):
        for _ in range(100):
            if consumer.partitions_for_topic(topic):
                break
            time.sleep(0.1)
    consumer.subscribe(args.topics.split(","), listener=Listener())
    deadline = time.monotonic() + args.max_runtime
    started = time.monotonic()
    consumed = 0
    next_tick = 0.0
    coord = consumer._coordinator
    uncommitted = False

    def lost() -> None:  # a finished join kafka-python is about to discard (tests/support/kafka_python_join.py)
        log.write("join-discarded", gen=coord._generation.generation_id)

    # --plain-poll (the control): kafka-python's own waits; discards are only counted.
    kafka_python_join.install(consumer, on_lost=lost, wait=not args.plain_poll)
    while not _STOP.is_set() and time.monotonic() < deadline:
        batch = consumer.poll(timeout_ms=100, max_records=args.max_poll_records)
        values = [int(r.value) for records in batch.values() for r in records]
        if values:
            log.write("records", values=values)
            consumed += len(values)
        if values or uncommitted:
            # Commit what was consumed; a commit that failed (a rebalance in progress) is retried on
            # the next pass, so a member that keeps its partitions still commits up to the log end.
            try:
                consumer.commit()
                uncommitted = False
            except KafkaError as exc:  # at-least-once: the records may be consumed again
                log.write("commit-failed", error=type(exc).__name__)
                uncommitted = True
        now = time.monotonic()
        if now >= next_tick:
            gen = coord._generation
            log.write(
                "tick",
                gen=gen.generation_id,
                member=gen.member_id,
                proto=gen.protocol,
                parts=_parts(consumer.assignment()),
            )
            next_tick = now + args.tick
        _throttle(started, consumed, args.rate)
    if _STOP.is_set():
        log.write("released", parts=_parts(consumer.assignment()))
        consumer.close(autocommit=False)
        log.write("closed")


async def run_aiokafka_async(args: argparse.Namespace, log: EventLog) -> None:
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
    from aiokafka.errors import KafkaError

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            log.write("revoked", parts=_parts(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            log.write("assigned", parts=_parts(assigned))

    consumer = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=args.name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=max(args.session_timeout_ms // 6, 200),
        max_poll_interval_ms=60000,
        max_poll_records=args.max_poll_records,
        partition_assignment_strategy=tuple(_assignors(args, log)),
        metadata_max_age_ms=5000,
        retry_backoff_ms=100,
        group_instance_id=args.group_instance_id,
    )
    consumer.subscribe(args.topics.split(","), listener=Listener())
    await consumer.start()
    deadline = time.monotonic() + args.max_runtime
    started = time.monotonic()
    consumed = 0
    next_tick = 0.0
    try:
        while not _STOP.is_set() and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=100, max_records=args.max_poll_records)
            values = [int(r.value) for records in batch.values() for r in records]
            if values:
                log.write("records", values=values)
                consumed += len(values)
                try:
                    await consumer.commit()
                except KafkaError as exc:
                    log.write("commit-failed", error=type(exc).__name__)
            now = time.monotonic()
            if now >= next_tick:
                coord = consumer._coordinator
                log.write("tick", gen=coord.generation, member=coord.member_id, parts=_parts(consumer.assignment()))
                next_tick = now + args.tick
            if args.rate > 0:
                ahead = consumed / args.rate - (time.monotonic() - started)
                if ahead > 0:
                    await asyncio.sleep(min(ahead, 0.2))
    finally:
        if _STOP.is_set():
            log.write("released", parts=_parts(consumer.assignment()))
        await consumer.stop()
        if _STOP.is_set():
            log.write("closed")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topics", required=True, help="comma-separated")
    p.add_argument("--client", choices=("kafka-python", "aiokafka"), default="kafka-python")
    p.add_argument(
        "--strategy",
        required=True,
        help="assignor names in preference order, comma-separated; builtin:NAME / kassign:NAME pick the library",
    )
    p.add_argument(
        "--builtin", action="store_true", help="bare names are the client's own assignors (benchmark baseline)"
    )
    p.add_argument("--group-instance-id", default=None, help="static membership (KIP-345)")
    p.add_argument("--name", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--priority", type=int, default=None)
    p.add_argument("--rack", default=None)
    p.add_argument("--session-timeout-ms", type=int, default=6000)
    p.add_argument("--max-poll-records", type=int, default=200)
    p.add_argument("--rate", type=float, default=0.0, help="max messages per second (0 = unbounded)")
    p.add_argument("--tick", type=float, default=0.3)
    p.add_argument("--max-runtime", type=float, default=300.0)
    p.add_argument(
        "--plain-poll",
        action="store_true",
        help="kafka-python: without the lost-join work-around (tests/support/kafka_python_join.py); "
        "the control for RELIABILITY.md",
    )
    p.add_argument("--coordinator-log-level", default="INFO", help="level of the client's coordinator log (stderr)")
    args = p.parse_args(argv)

    # The clients' group-coordination log (joins, syncs, heartbeat errors) goes to stderr, which the
    # harness keeps beside the event log: the record to read when a group does not settle.
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s"
    )
    for name in ("kafka.coordinator", "aiokafka.consumer.group_coordinator"):
        logging.getLogger(name).setLevel(args.coordinator_log_level)
    log = EventLog(args.events, args.name)
    signal.signal(signal.SIGTERM, lambda *_: _STOP.set())
    signal.signal(signal.SIGINT, lambda *_: _STOP.set())
    log.write("start", pid=os.getpid(), client=args.client, strategy=args.strategy, builtin=args.builtin)
    if args.client == "kafka-python":
        run_kafka_python(args, log)
    else:
        asyncio.run(run_aiokafka_async(args, log))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
    sys.exit(main())
