"""kassign's broker plugin (``java/broker/``, assignor ``kassign``) against the broker's own ``uniform``,
both driven through the group coordinator's ``TargetAssignmentBuilder`` (Apache Kafka 4.4.0).

The seeded chains of group states of ``peers/server_diff.py`` go through
``peers/java/.../ServerDiff.java`` twice: once with ``UniformAssignor`` and once with the
plugin jar (``dist/kassign-broker-<version>.jar``, from ``make broker-plugin``) on the class path and
its ``KassignAssignor`` loaded by class name, as a broker loads it. Each chain keeps its own target
assignment, as the coordinator does. For every step (one random group state):

* ``valid``: kassign's plan gives every partition of every subscribed topic to exactly one
  subscriber (independent check, ``server_diff.validity_error``);
* ``python``: kassign's plan through the broker equals ``kassign.assign("server-kassign", ...)`` on
  the same inputs (topics named by their topic id, as the plugin names them; the member's current
  target as ``owned_partitions``): the what-if and the broker agree exactly;
* ``balance``: the sum of squared member loads is at most ``uniform``'s, in every group;
* ``kept``: where the two plans are equally balanced and both chains start the step from the same
  current target assignment, kassign keeps at least as many partitions as ``uniform``.

``python peers/server_kassign_diff.py --scenarios 2000 --json out/server-kassign-diff.json`` prints
the figures of docs/broker.md; ``tests/broker/test_broker_plugin.py`` runs 1,000 scenarios in ``make test``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if not __package__:  # run as a script: the repo root, for the peers package
    sys.path.insert(0, str(REPO))

from peers import server_diff  # noqa: E402


def plugin_jar() -> Path:
    """The jar `make broker-plugin` builds (version from Cargo.toml, as the wheel's)."""
    match = re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M)
    if not match:
        raise RuntimeError("no version in Cargo.toml")
    jar = REPO / "dist" / f"kassign-broker-{match.group(1)}.jar"
    if not jar.exists():
        raise RuntimeError(f"{jar} is missing: run `make broker-plugin` first")
    return jar


def sumsq(result: Mapping[str, list]) -> int:
    return sum(len(v) ** 2 for v in result.values())


def python_plan(step: dict, previous: Mapping[str, list], ids: Mapping[str, str]) -> dict[str, list[tuple[str, int]]]:
    """``server-kassign`` from Python on the inputs the plugin saw, mapped back to topic names."""
    import kassign

    topics = step["topics"]
    by_id = {ids[t]: n for t, n in topics.items()}
    members = {
        m: kassign.Member(
            [ids[t] for t in spec["topics"] if t in topics],
            owned_partitions=[(ids[t], p) for t, p in previous.get(m, []) if t in topics],
        )
        for m, spec in step["members"].items()
    }
    names = {v: k for k, v in ids.items()}
    res = kassign.assign("server-kassign", members, by_id)
    return {m: sorted((names[tp[0]], tp[1]) for tp in tps) for m, tps in res.items()}


def as_set(previous: Mapping[str, list]) -> dict[str, frozenset]:
    return {m: frozenset(tuple(tp) for tp in v) for m, v in previous.items() if v}


def run(n: int, seed: int = server_diff.DEFAULT_SEED) -> dict[str, Any]:
    t0 = time.time()
    docs, feats = server_diff.chains(n, seed)
    rows_k = server_diff.run_java_rows(docs, "kassign", (plugin_jar(),))
    steps_u = server_diff.run_java(docs, "uniform")
    stats: Counter = Counter()
    failures: list[dict] = []
    for chain, row, ju in zip(docs, rows_k, steps_u):
        jk = row["steps"]
        prev_k = server_diff.previous_targets(chain, jk)
        prev_u = server_diff.previous_targets(chain, ju)
        for k, (step, pk, pu, rk, ru) in enumerate(zip(chain["steps"], prev_k, prev_u, jk, ju)):
            stats["groups"] += 1
            stats["homogeneous" if server_diff.homogeneous(step) else "heterogeneous"] += 1

            where = {"chain": chain["id"], "step": k, "step_doc": step}

            if "error" in rk["broker"]:
                failures.append({**where, "what": "kassign-error", "error": rk["broker"]["error"]})
                continue
            kas = server_diff.as_assignment(rk["broker"])
            bad = server_diff.validity_error(step, kas)
            if bad:
                failures.append({**where, "what": "kassign-invalid", "detail": bad, "kassign": kas})
                continue
            stats["valid"] += 1
            py = python_plan(step, pk, row["topic_ids"])
            if py != kas:
                failures.append({**where, "what": "python-differs", "kassign": kas, "python": py, "previous": pk})
            else:
                stats["python_equal"] += 1
            if "error" in ru["broker"]:
                stats["uniform_error"] += 1
                continue
            uni = server_diff.as_assignment(ru["broker"])
            sk, su = sumsq(kas), sumsq(uni)
            if sk > su:
                failures.append({**where, "what": "less-balanced-than-uniform", "kassign": kas, "uniform": uni})
            elif sk < su:
                stats["better_balance"] += 1
            else:
                stats["equal_balance"] += 1
            same_start = as_set(pk) == as_set(pu)
            if same_start and any(pk.values()):
                stats["same_start_with_target"] += 1
            if same_start and sk == su:
                stats["same_start_equal_balance"] += 1
                kk, ku = server_diff.kept(pk, kas), server_diff.kept(pu, uni)
                if kk < ku:
                    failures.append(
                        {**where, "what": "kept-fewer-than-uniform", "kassign": kas, "uniform": uni, "previous": pk}
                    )
                elif kk > ku:
                    stats["kept_more"] += 1
                else:
                    stats["kept_equal"] += 1
                stats["kept_kassign"] += kk
                stats["kept_uniform"] += ku
    return {
        "scenarios": stats["groups"],
        "chains": len(docs),
        "seed": seed,
        "seconds": round(time.time() - t0, 1),
        "features": dict(sorted(feats.items())),
        "figures": dict(sorted(stats.items())),
        "failures": failures,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=server_diff.DEFAULT_SEED)
    ap.add_argument("--json", help="write the summary (and failing scenarios) here")
    args = ap.parse_args(argv)
    summary = run(args.scenarios, args.seed)
    return server_diff.report(summary, args.json)


if __name__ == "__main__":
    sys.exit(main())
