"""Write a benchmark scenario's JoinGroup metadata (as kassign members of a strategy send it) to a
file for the Rust wire-path bench (`rust/core/benches/wire/main.rs`), which times the leader's bytes-in,
bytes-out path with no Python in the loop.

    python benches/wire_dump.py java-large-uniform/round2 sticky out/wire-1m.bin
    cargo bench --bench wire -- out/wire-1m.bin sticky

Layout (little-endian u32 lengths): topic count, then (name length, name, partition count) per
topic; member count, then (id length, id, metadata length, metadata) per member.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: peers

from peers import contenders, scenarios


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", help="a scenario name, e.g. java-large-uniform/round2")
    ap.add_argument("strategy")
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    doc = json.loads(scenarios.scenario_path(args.scenario).read_text())
    subs = contenders._wire_subscriptions(doc, args.strategy)
    topics = dict(contenders._scenario(doc).partitions_per_topic)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("wb") as f:
        f.write(struct.pack("<I", len(topics)))
        for name, count in topics.items():
            b = name.encode()
            f.write(struct.pack("<I", len(b)) + b + struct.pack("<I", count))
        f.write(struct.pack("<I", len(subs)))
        for mid, data in subs.items():
            b = mid.encode()
            f.write(struct.pack("<I", len(b)) + b + struct.pack("<I", len(data)) + data)
    print(args.out)


if __name__ == "__main__":
    main()
