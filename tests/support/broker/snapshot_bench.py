"""Wall time of ``kassign snapshot`` on a local broker holding N live consumer groups.

    .venv/bin/python tests/support/broker/snapshot_bench.py [--groups 2000] [--topics 100] [--partitions 8]
        [--trials 3] [--json out/snapshot-bench.json]
    make bench-snapshot

Starts the test broker (tests/support/kafka_broker.py: one KRaft node), creates TOPICS topics of
PARTITIONS partitions with a few records each, commits an offset for every partition of each
group's topic (the admin client's OffsetCommit, while the group is empty), then makes every group
live: one member per group joins (JoinGroup, then SyncGroup as the leader, assigning itself every
partition of its topic), sent through kafka-python's network client. Members have a 10-minute
session timeout, so they stay in their groups without heartbeats while the snapshots run.

Then runs ``python -m kassign snapshot --quiet`` (the command as a user types it) TRIALS times and
reports each wall time, and checks that the snapshot holds every group, member and committed
offset. The broker is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS_DIR))

from kassign.protocol import encode_assignment, encode_subscription  # noqa: E402
from support import kafka_broker as kb  # noqa: E402

SESSION_MS = 600_000
MEMBER_ID_REQUIRED = 79


def _run(client: Any, requests: list[Any], node: int) -> list[Any]:
    """Send every request to ``node``, a few in flight at a time; the responses in order."""
    out: list[Any] = [None] * len(requests)
    nxt, flying = 0, {}
    while nxt < len(requests) or flying:
        while nxt < len(requests) and len(flying) < 5:
            flying[nxt] = client.send(node, requests[nxt])
            nxt += 1
        client.poll(timeout_ms=50)
        for i, f in list(flying.items()):
            if f.is_done:
                if f.failed():
                    raise RuntimeError(f"request failed: {f.exception!r}")
                out[i] = f.value
                del flying[i]
    return out


def make_live_groups(bootstrap: str, groups: list[str], topic_of: dict[str, str], partitions: int) -> None:
    from kafka.net.compat import KafkaNetClient
    from kafka.protocol.consumer import JoinGroupRequest, SyncGroupRequest
    from kafka.protocol.metadata import FindCoordinatorRequest

    client = KafkaNetClient(bootstrap_servers=bootstrap, client_id="snapshot-bench", request_timeout_ms=60_000)
    try:
        client.get_broker_version(timeout_ms=30_000)
        node = client.least_loaded_node()
        coord = _run(client, [FindCoordinatorRequest(key_type=0, coordinator_keys=groups, min_version=4)], node)[0]
        assert all(c.error_code == 0 for c in coord.coordinators), coord
        node = coord.coordinators[0].node_id

        def join(gid: str, member_id: str) -> Any:
            sub = encode_subscription([topic_of[gid]], version=3)
            return JoinGroupRequest(
                group_id=gid,
                session_timeout_ms=SESSION_MS,
                rebalance_timeout_ms=SESSION_MS,
                member_id=member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[("range", sub)],
                max_version=7,
            )

        first = _run(client, [join(g, "") for g in groups], node)
        assert all(r.error_code == MEMBER_ID_REQUIRED for r in first), {r.error_code for r in first}
        joined = _run(client, [join(g, r.member_id) for g, r in zip(groups, first)], node)
        assert all(r.error_code == 0 and r.leader == r.member_id for r in joined), {r.error_code for r in joined}
        syncs = [
            SyncGroupRequest(
                group_id=g,
                generation_id=r.generation_id,
                member_id=r.member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[(r.member_id, encode_assignment([(topic_of[g], p) for p in range(partitions)]))],
                max_version=5,
            )
            for g, r in zip(groups, joined)
        ]
        synced = _run(client, syncs, node)
        assert all(r.error_code == 0 for r in synced), {r.error_code for r in synced}
    finally:
        client.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, default=2000)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    from kafka.structs import OffsetAndMetadata, TopicPartition

    work = Path(tempfile.mkdtemp(prefix="kassign-snapshot-bench-"))
    broker = kb.KafkaBroker(kb.broker_libs(), work / "broker")
    broker.start()
    try:
        topics = [broker.unique_name("bench-t") for _ in range(args.topics)]
        for t in topics:
            broker.create_topic(t, args.partitions)
        broker.produce_numbered(topics, args.topics * args.partitions * 4)
        groups = [f"bench-g-{i:05d}" for i in range(args.groups)]
        topic_of = {g: topics[i % len(topics)] for i, g in enumerate(groups)}
        t0 = time.monotonic()
        from kafka.errors import CoordinatorNotAvailableError, NotCoordinatorError

        admin = broker.admin()
        for g in groups:
            offsets = {TopicPartition(topic_of[g], p): OffsetAndMetadata(1, "", -1) for p in range(args.partitions)}
            deadline = time.monotonic() + 60
            while True:
                try:  # a fresh broker's group coordinator (__consumer_offsets) takes a moment
                    admin.alter_group_offsets(g, offsets)
                    break
                except (CoordinatorNotAvailableError, NotCoordinatorError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        make_live_groups(broker.bootstrap, groups, topic_of, args.partitions)
        print(f"{args.groups} live groups set up in {time.monotonic() - t0:.1f}s", file=sys.stderr)

        seconds = []
        for trial in range(args.trials):
            out = work / f"snap-{trial}"
            started = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-m", "kassign", "snapshot", "--bootstrap-servers", broker.bootstrap]
                + ["--out", str(out), "--quiet"],
                capture_output=True,
                text=True,
                timeout=900,
            )
            seconds.append(time.monotonic() - started)
            if proc.returncode != 0:
                raise SystemExit(f"kassign snapshot failed ({proc.returncode}): {proc.stderr[-2000:]}")
            meta = json.loads((out / "snapshot.json").read_text())
            rows = meta["rows"]
            want = {"groups": args.groups, "members": args.groups, "offsets": args.groups * args.partitions}
            got = {k: rows[k] for k in want}
            if got != want:
                raise SystemExit(f"the snapshot holds {got}, expected {want}")
            print(f"trial {trial + 1}: {seconds[-1]:.2f}s ({proc.stdout.strip()})", file=sys.stderr)
        result = {
            "groups": args.groups,
            "topics": args.topics,
            "partitions_per_topic": args.partitions,
            "seconds": [round(s, 3) for s in seconds],
            "median_seconds": round(statistics.median(seconds), 3),
        }
        print(json.dumps(result))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    finally:
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
