"""Decoding a large group's subscriptions into Python objects: kassign vs kafka-python.

The shape: 2000 members, each subscribing to 500 topics and owning 500 partitions (one of each
topic), about 32 MB of ConsumerProtocolSubscription v3 bytes in all. Both decoders get the same
bytes; each run decodes all 2000. Prints a table and writes benches/results/decode.json (``--out``),
which `benches/run_all.py` runs and includes in BENCHMARKS.md.

    .venv/bin/python benches/decode_subscriptions.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "decode.json"


def build(members: int = 2000, topics: int = 500) -> list[bytes]:
    from kassign import protocol

    names = [f"topic-{i:04d}" for i in range(topics)]
    out = []
    for m in range(members):
        owned = [(t, (m + i) % 64) for i, t in enumerate(names)]
        out.append(protocol.encode_subscription(names, None, owned, 7, f"rack-{m % 3}"))
    return out


def time_runs(fn, data: list[bytes], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for d in data:
            fn(d)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS, help="the JSON it writes (default: %(default)s)")
    args = ap.parse_args()
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    from kassign import protocol

    data = build()
    size = sum(map(len, data))
    # Same content from both decoders (checked once, not timed).
    a = protocol.decode_subscription(data[1])
    b = ConsumerProtocolSubscription.decode(data[1])
    assert list(a.topics) == list(b.topics)
    assert [(tp.topic, tp.partition) for tp in a.owned_partitions] == [
        (e.topic, p) for e in b.owned_partitions for p in e.partitions
    ]
    kassign_t = time_runs(protocol.decode_subscription, data, args.runs)
    kafka_t = time_runs(ConsumerProtocolSubscription.decode, data, max(1, min(args.runs, 3)))
    res = {
        "members": len(data),
        "bytes": size,
        "runs": args.runs,
        "kassign_median_s": statistics.median(kassign_t),
        "kafka_python_median_s": statistics.median(kafka_t),
        "load": os.getloadavg(),
        "command": "benches/decode_subscriptions.py" + (f" --runs {args.runs}" if args.runs != 5 else ""),
    }
    res["ratio"] = res["kafka_python_median_s"] / res["kassign_median_s"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(f"| decoder | {len(data)} subscriptions, {size / 1e6:.1f} MB |")
    print("|---|---|")
    print(f"| kassign.protocol.decode_subscription | {res['kassign_median_s'] * 1e3:.0f} ms |")
    print(
        f"| kafka-python ConsumerProtocolSubscription.decode | {res['kafka_python_median_s'] * 1e3:.0f} ms "
        f"({res['ratio']:.1f}x) |"
    )
    print(f"load average {res['load']}")


if __name__ == "__main__":
    main()
