"""Digests of kassign's results on seeded groups, to compare interpreters and platforms.

Builds GROUPS random groups from fixed seeds (``random.Random(seed)``, whose integer streams are the
same on every CPython version and platform), runs every strategy of ``kassign.STRATEGIES`` on each
for two rounds (the second with the first round's assignment as owned partitions, a member gone
and one new), and prints one SHA-256 per strategy, over the results and their
ConsumerProtocolAssignment bytes, then one over everything. An input a strategy rejects counts by
its error message. Two builds agree when every line is byte-identical (scripts/foreign-wheel
compares the aarch64 and win_amd64 wheels with the x86_64 one this way).

Needs only the standard library and kassign. Usage: python seeded_digest.py [GROUPS]
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from typing import Any

import kassign
from kassign import protocol


def group(seed: int) -> dict[str, Any]:
    rnd = random.Random(seed)
    topics = {f"t{i}": rnd.randint(1, 24) for i in range(rnd.randint(1, 4))}
    racks = ["r0", "r1", "r2"]
    members = {}
    for m in range(rnd.randint(1, 8)):
        subscribed = sorted(rnd.sample(sorted(topics), rnd.randint(1, len(topics))))
        members[f"m{m:02d}"] = {"topics": subscribed, "rack": rnd.choice([None, *racks])}
    partition_racks = {(t, p): rnd.sample(racks, 2) for t, n in topics.items() for p in range(n)}
    lags = {(t, p): rnd.randrange(0, 10**6) for t, n in topics.items() for p in range(n)}
    return {"topics": topics, "members": members, "partition_racks": partition_racks, "lags": lags}


def run(strategy: str, g: dict[str, Any], owned: dict[str, list[Any]], generation: int) -> Any:
    members = {
        m: kassign.Member(spec["topics"], owned_partitions=owned.get(m, ()), generation=generation, rack=spec["rack"])
        for m, spec in g["members"].items()
    }
    kwargs: dict[str, Any] = {"partition_racks": g["partition_racks"]}
    if strategy == "lag-aware":
        kwargs["lags"] = g["lags"]
    try:
        return kassign.assign(strategy, members, g["topics"], **kwargs)
    except (ValueError, TypeError) as e:
        return f"{type(e).__name__}: {e}"


def record(result: Any) -> Any:
    if isinstance(result, str):
        return result
    return {m: [[[t, p] for t, p in tps], protocol.encode_assignment(tps).hex()] for m, tps in sorted(result.items())}


def main() -> None:
    groups = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    total = hashlib.sha256()
    for strategy in kassign.STRATEGIES:
        h = hashlib.sha256()
        for seed in range(groups):
            g = group(seed)
            first = run(strategy, g, {}, -1)
            owned = {} if isinstance(first, str) else {m: list(tps) for m, tps in first.items()}
            # The second round: the first member leaves, a new one joins with every topic.
            gone = sorted(g["members"])[0]
            g["members"].pop(gone)
            g["members"]["m99"] = {"topics": sorted(g["topics"]), "rack": "r1"}
            owned.pop(gone, None)
            second = run(strategy, g, owned, 1)
            line = json.dumps([seed, record(first), record(second)], sort_keys=True, separators=(",", ":"))
            h.update(line.encode() + b"\n")
        total.update(f"{strategy} {h.hexdigest()}\n".encode())
        print(strategy, h.hexdigest())
    print("all", total.hexdigest())


if __name__ == "__main__":
    main()
