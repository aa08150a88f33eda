"""``kassign.assign`` on one scenario of the grid (peers/scenarios.py), called several times in one
process: the ``kassign.Member`` path end to end (members read, strategy run, result objects built).
Time the whole process from outside (``/usr/bin/time -v``), once per build to compare.

    .venv/bin/python benches/assign_members.py np-2100/round2 sticky --calls 20
    .venv/bin/python benches/assign_members.py java-large-uniform/round2 sticky --calls 3
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root: the peers package

from peers import scenarios as S


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", help="<shape>/<round>, as `python -m peers.scenarios --list` names them")
    ap.add_argument("strategy", help="a name in kassign.STRATEGIES")
    ap.add_argument("--calls", type=int, default=10, help="kassign.assign calls (default 10)")
    args = ap.parse_args(argv)

    import kassign
    from kassign.scenario import parse_scenario

    sc = parse_scenario(json.loads(S.scenario_path(args.scenario).read_text()))
    total = 0
    for _ in range(args.calls):
        result = kassign.assign(args.strategy, sc.members, sc.partitions_per_topic, partition_racks=sc.partition_racks)
        total += sum(len(v) for v in result.values())
    print(f"{args.scenario} {args.strategy}: {args.calls} calls, {total} partitions assigned")


if __name__ == "__main__":
    main()
