"""Smoke test of an installed kassign wheel (run by scripts/dist-smoke in a clean virtualenv).

Checks, against the installed package and not the source tree:

* the package imports from site-packages, its version is the one expected, and no Rust toolchain
  is on PATH (so nothing could have been compiled on the way);
* ``kassign.assign`` on a small group (range and cooperative-sticky), with results worked out by
  hand from the strategies' rules;
* a ``kassign.protocol`` round trip of Java's documented subscription bytes;
* the ``kassign`` console script on a scenario given on stdin;
* the kafka-python drop-in ``RangeAssignor`` running a whole rebalance through kafka-python's own
  interface, without a broker: each member's ``metadata()`` bytes, kafka-python's decoding of them
  into ``JoinGroupResponseMember``s, the leader's ``assign(cluster, members)`` on a kafka-python
  ``ClusterMetadata`` filled from an encoded MetadataResponse, the assignments' wire bytes, and
  each member's ``on_assignment``.

Usage: python dist_smoke.py EXPECTED_VERSION [UNPACKED_DIR]

With UNPACKED_DIR (the aarch64 and win_amd64 wheels under qemu and wine, scripts/foreign-wheel),
the wheel was unzipped there rather than installed by pip: kassign must be imported from that
directory, and the CLI runs in this process, through ``kassign.cli.main`` (there is no console
script, and under qemu-user a child process could not start the foreign interpreter).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


def check(cond: bool, what: str) -> None:
    if not cond:
        raise SystemExit(f"smoke test FAILED: {what}")
    print(f"ok: {what}")


def main() -> None:
    expected_version = sys.argv[1]
    unpacked = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else None
    check(shutil.which("cargo") is None and shutil.which("rustc") is None, "no cargo or rustc on PATH")

    import kassign

    site = unpacked or Path(sysconfig.get_paths()["purelib"]).resolve()
    check(Path(kassign.__file__).resolve().is_relative_to(site), f"kassign imported from {site}")
    check(kassign.__version__ == expected_version, f"kassign.__version__ == {expected_version}")
    check(
        set(kassign.STRATEGIES)
        >= {"range", "roundrobin", "sticky", "cooperative-sticky", "lag-aware", "fair", "failover"},
        f"strategies present: {', '.join(kassign.STRATEGIES)}",
    )

    # range over 5 partitions and 2 members: contiguous runs, the first member gets the extra one.
    members = {"c1": kassign.Member(["t"]), "c2": kassign.Member(["t"])}
    got = kassign.assign("range", members, {"t": 5})
    check(got == {"c1": [("t", 0), ("t", 1), ("t", 2)], "c2": [("t", 3), ("t", 4)]}, "range assignment")

    # cooperative-sticky: c1 owned all 4 partitions at generation 3, c2 joins. Balance needs 2 each;
    # c1 keeps 2 and the 2 it gives up are withheld this round (still owned by c1).
    members = {
        "c1": kassign.Member(["t"], owned_partitions=[("t", p) for p in range(4)], generation=3),
        "c2": kassign.Member(["t"]),
    }
    got = kassign.assign("cooperative-sticky", members, {"t": 4})
    check(len(got["c1"]) == 2 and got["c2"] == [], f"cooperative-sticky withholds the moving partitions: {got}")

    from kassign import protocol

    java_bytes = bytes.fromhex(
        "0003000000010001740000000400000005000000010001740000000200000000000000010000000500027231"
    )
    sub = protocol.decode_subscription(java_bytes)
    check(
        (sub.version, sub.topics, sub.owned_partitions, sub.generation, sub.rack)
        == (3, ("t",), (("t", 0), ("t", 1)), 5, "r1"),
        "decode Java's subscription v3 bytes",
    )
    again = protocol.encode_subscription(
        sub.topics, sub.user_data, sub.owned_partitions, sub.generation, sub.rack, version=3
    )
    check(again == java_bytes, "re-encoding gives the same bytes")

    scenario = {"topics": {"t": 3}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}
    if unpacked is None:
        script = shutil.which("kassign")
        check(
            script is not None and Path(script).resolve().parent == Path(sys.executable).parent.resolve(),
            "console script installed",
        )
    code, stdout, _ = run_cli(unpacked is None, ["assign", "--strategy", "roundrobin", "-"], json.dumps(scenario))
    check(code == 0 and json.loads(stdout) == {"a": [["t", 0], ["t", 2]], "b": [["t", 1]]}, "kassign assign CLI")
    code, _, stderr = run_cli(unpacked is None, ["assign", "--strategy", "range", "-"], "{")
    check(code == 2 and stderr.count("\n") == 1, "CLI: malformed JSON is one line on stderr, status 2")

    kafka_python_rebalance()
    print("smoke test passed")


def run_cli(console_script: bool, args: list[str], stdin: str) -> tuple[int, str, str]:
    """The ``kassign`` CLI on ``stdin``: (exit status, stdout, stderr), through the installed console
    script in a child process, or else through ``kassign.cli.main`` in this one."""
    if console_script:
        proc = subprocess.run(["kassign", *args], input=stdin, capture_output=True, text=True)
        return proc.returncode, proc.stdout, proc.stderr
    from kassign.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(args)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def kafka_python_rebalance() -> None:
    from kafka.cluster import ClusterMetadata
    from kafka.protocol.consumer.group import JoinGroupResponse
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
    from kafka.protocol.metadata import MetadataResponse

    from kassign.kafka_python import RangeAssignor

    # Cluster metadata as kafka-python's client keeps it: "orders" with 5 partitions, "audit" with 2.
    broker = MetadataResponse.MetadataResponseBroker
    topic = MetadataResponse.MetadataResponseTopic
    part = topic.MetadataResponsePartition
    response = MetadataResponse(
        version=1,
        brokers=[broker(node_id=0, host="localhost", port=9092, rack=None)],
        controller_id=0,
        topics=[
            topic(
                error_code=0,
                name=name,
                is_internal=False,
                partitions=[
                    part(error_code=0, partition_index=i, leader_id=0, replica_nodes=[0], isr_nodes=[0])
                    for i in range(n)
                ],
            )
            for name, n in (("orders", 5), ("audit", 2))
        ],
    )
    cluster = ClusterMetadata()
    cluster.update_metadata(MetadataResponse.decode(response.encode(version=1), version=1))
    check(cluster.partitions_for_topic("orders") == {0, 1, 2, 3, 4}, "kafka-python ClusterMetadata filled")

    # Three consumers, each with its own assignor instance (as in three processes).
    subscriptions = {"m-1": ["orders", "audit"], "m-2": ["orders"], "m-3": ["orders", "audit"]}
    assignors = {m: RangeAssignor() for m in subscriptions}
    join_members = []
    for member_id, topics in subscriptions.items():
        data = assignors[member_id].metadata(set(topics))
        raw = data if isinstance(data, bytes) else data.encode()
        member = JoinGroupResponse.JoinGroupResponseMember(member_id=member_id, group_instance_id=None, metadata=raw)
        # What kafka-python's coordinator does before calling the leader's assignor.
        member.metadata = ConsumerProtocolSubscription.decode(member.metadata)
        join_members.append(member)

    leader = assignors["m-1"]
    assignments = leader.assign(cluster, join_members)
    got = {}
    for member_id, assignment in assignments.items():
        # kafka-python's contract: "assignment must either be bytes or have an encode() method".
        wire = assignment if isinstance(assignment, bytes) else assignment.encode()
        decoded = ConsumerProtocolAssignment.decode(wire)
        got[member_id] = sorted((t.topic, p) for t in decoded.assigned_partitions for p in t.partitions)
        assignors[member_id].on_assignment(decoded, 1)
    # range by hand: orders (5) over m-1, m-2, m-3 -> [0, 1], [2, 3], [4]; audit (2) over m-1, m-3.
    expected = {
        "m-1": [("audit", 0), ("orders", 0), ("orders", 1)],
        "m-2": [("orders", 2), ("orders", 3)],
        "m-3": [("audit", 1), ("orders", 4)],
    }
    check(got == expected, f"kafka-python RangeAssignor rebalance: {got}")
    check(
        sorted(assignors["m-3"].owned_partitions) == [("audit", 1), ("orders", 4)],
        "on_assignment recorded the member's partitions",
    )


if __name__ == "__main__":
    main()
