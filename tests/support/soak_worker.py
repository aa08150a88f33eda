"""Many confluent-kafka consumers in one process, for the broker soak test (tests/broker/test_broker_soak.py).

    python tests/support/soak_worker.py --bootstrap 127.0.0.1:PORT --topics a,b \
        --members g1:w1,g2:w1 --assignor kassign --events w1.jsonl

Each ``GROUP:NAME`` pair is one consumer (``group.protocol=consumer``,
``group.remote.assignor=ASSIGNOR``, ``client.id=NAME``) subscribed to ``--topics``. Each
consumer polls on a thread of its own (:func:`_poll`).
Events go to ``--events`` as JSON lines, flushed line by line before offsets are committed (a SIGKILL
never loses a consumed value from the log):

* ``records``: ``{"g": group, "m": name, "v": [values]}``, the numbered values one poll returned;
* ``assign`` / ``revoke`` / ``lost``: a rebalance callback and the partitions it carried
  (``{"g": group, "m": name, "p": [[topic, partition], ...]}``; the group protocol's callbacks are
  incremental: added, revoked or lost partitions only);
* ``closing``: every poll loop has ended (no record is consumed after it) and the consumers are about
  to close;
* ``closed``: every consumer closed after SIGTERM (each left its group).

Every event carries ``mono``, ``time.monotonic()`` when it was written: Linux's CLOCK_MONOTONIC,
one clock for every process on the machine, so the test orders events of different workers by it.

The process stops on SIGTERM (every consumer closes, which leaves its group) or after
``--max-runtime`` seconds; SIGKILL is the members' crash.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_STOP = threading.Event()
COMMIT_EVERY = 2.0  # seconds between one consumer's offset commits
POLL_TIMEOUT = 0.5  # seconds one consume() waits


class Events:
    def __init__(self, path: str) -> None:
        self.fh = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def write(self, ev: str, **fields: Any) -> None:
        line = json.dumps({"ev": ev, "mono": time.monotonic(), **fields}, separators=(",", ":"))
        with self.lock:
            self.fh.write(line + "\n")
            self.fh.flush()


def _consumer(args: argparse.Namespace, events: Events, group: str, name: str) -> Any:
    from confluent_kafka import Consumer

    def callback(ev: str) -> Any:
        return lambda _consumer, parts: events.write(ev, g=group, m=name, p=[[tp.topic, tp.partition] for tp in parts])

    c = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": group,
            "client.id": name,
            "group.protocol": "consumer",
            "group.remote.assignor": args.assignor,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            # Small fetch queues: many consumers share one process.
            "queued.max.messages.kbytes": 256,
            "queued.min.messages": 500,
            "topic.metadata.refresh.interval.ms": 5000,
            # The rebalance timeout the member sends the coordinator: a member that has not revoked
            # partitions within it is fenced and rejoins (the protocol's own recovery), instead of
            # holding its group in reconciliation for the default five minutes. 45 s is the
            # smallest librdkafka accepts (it must be at least session.timeout.ms, default 45 s).
            "max.poll.interval.ms": 45000,
        }
    )
    c.subscribe(
        args.topics.split(","), on_assign=callback("assign"), on_revoke=callback("revoke"), on_lost=callback("lost")
    )
    return c


def _poll(events: Events, group: str, name: str, c: Any, deadline: float) -> None:
    """One consumer's poll loop, on a thread of its own: a blocking ``consume`` returns as soon as
    librdkafka queues a rebalance, so the member's callbacks run at once, as in an application with
    a thread per consumer. (One thread polling fifty consumers in turn ran a member's revoke callback
    up to 0.4 s after the coordinator had handed the partition on, with ``uniform`` as with
    ``kassign``.)

    Offsets are committed at most every COMMIT_EVERY seconds, after the values are in the event log:
    a commit per poll kept the group coordinators busy enough, on a loaded machine, to delay the
    consumers' heartbeats (librdkafka queues them behind the OffsetCommit requests).
    """
    last_commit = 0.0
    while not _STOP.is_set() and time.monotonic() < deadline:
        values = [int(msg.value()) for msg in c.consume(500, POLL_TIMEOUT) if msg.error() is None]
        if not values:
            continue
        events.write("records", g=group, m=name, v=values)
        now = time.monotonic()
        if now - last_commit >= COMMIT_EVERY:
            last_commit = now
            try:
                c.commit(asynchronous=True)
            except Exception as exc:  # at least once: an uncommitted value is consumed again
                events.write("commit-failed", g=group, m=name, error=str(exc))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topics", required=True, help="comma-separated")
    p.add_argument("--members", required=True, help="GROUP:NAME pairs, comma-separated")
    p.add_argument("--assignor", default="kassign")
    p.add_argument("--events", required=True)
    p.add_argument("--max-runtime", type=float, default=3600.0)
    args = p.parse_args(argv)
    events = Events(args.events)
    signal.signal(signal.SIGTERM, lambda *_: _STOP.set())
    signal.signal(signal.SIGINT, lambda *_: _STOP.set())
    members = [tuple(pair.split(":", 1)) for pair in args.members.split(",")]
    consumers = [(g, n, _consumer(args, events, g, n)) for g, n in members]
    events.write("start", members=len(consumers))
    deadline = time.monotonic() + args.max_runtime
    threads = [threading.Thread(target=_poll, args=(events, g, n, c, deadline), daemon=True) for g, n, c in consumers]
    for t in threads:
        t.start()
    while not _STOP.is_set() and time.monotonic() < deadline:
        _STOP.wait(0.5)  # the signal handlers run on this thread
    _STOP.set()
    for t in threads:
        t.join(POLL_TIMEOUT + 30)
    events.write("closing")
    # Leave every group (in parallel: a close waits for the coordinator's answer).
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda gnc: gnc[2].close(), consumers))
    events.write("closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
