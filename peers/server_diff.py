"""Differential testing of kassign's ``server-uniform`` and ``server-range`` against the broker's
own assignors (Apache Kafka 4.4.0, ``org.apache.kafka:kafka-group-coordinator``; issue 16).

Seeded *chains* of group states go through ``peers/java/.../ServerDiff.java``, which runs
the group coordinator's ``TargetAssignmentBuilder`` with ``UniformAssignor`` or ``RangeAssignor``
step after step, keeping the target assignment the way the coordinator does (records replayed;
leavers' targets dropped; a static member rejoining under a new member id inherits its
predecessor's target). Each step is one *scenario*: kassign gets the same members and the same
previous target assignment (``owned_partitions``) and its result is compared with:

* ``broker``: Java's plan as the coordinator computes it (random topic ids, hash-ordered maps);
* ``sorted``: the same Java assignor on the same input with members, topics and partitions handed
  over in canonical order (by member id, by topic name, ascending), which is kassign's order;
* ``shuffled``: the same with a seeded random order (how often Java's plan depends on order).

Judgement (docs/server_assignors.md has the figures):

``server-range``
    equal to ``broker`` (and to ``sorted``), as sets per member. Nothing else is accepted.

``server-uniform``
    valid and complete (independent check below); then

    * ``equal``: the same sets as ``broker``;
    * ``order-dependent``: different from ``broker``, but equal to ``sorted`` -- Java's own plan
      changes when only the iteration order of its hash maps changes, and kassign's is Java's plan
      for the canonical order. Each such difference is classified by what the order decided
      (``rule``) and checked for equivalence: the same multiset of member loads and the same number
      of partitions kept from the previous target (for homogeneous groups this must always hold;
      for heterogeneous groups Java's own plans can differ in loads, which is counted);
    * ``unexplained``: anything else (a kassign bug).

Run ``python peers/server_diff.py --scenarios 10000 --json out/server-diff.json`` (``make
test-server-diff``); ``tests/differential/test_server_differential.py`` runs 1,500 scenarios in ``make test``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
JAVA_DIR = REPO / "peers" / "java"
JAVA_JAR = JAVA_DIR / "target" / "kassign-java-harness.jar"
DEFAULT_SEED = 20260416

Assignment = dict[str, list[tuple[str, int]]]

# --------------------------------------------------------------------------------------------
# Scenario chains
# --------------------------------------------------------------------------------------------


def _member_id(rnd: random.Random, style: str, k: int) -> str:
    if style == "short":
        return f"c{k:02d}"
    if style == "hex":
        return f"consumer-{rnd.randrange(16**6):06x}"
    # What a KIP-848 consumer sends: a random Uuid in Kafka's base64 form (22 characters).
    return base64.urlsafe_b64encode(rnd.randbytes(16)).decode().rstrip("=")


def _subscribe(rnd: random.Random, names: list[str], common: list[str] | None) -> list[str]:
    if common is not None:
        return list(common)
    return sorted(rnd.sample(names, rnd.randint(1, len(names))))


def _initial_target(rnd: random.Random, members: Mapping[str, dict], topics: Mapping[str, int]) -> dict:
    """A previous target assignment: none, or a non-overlapping one as a classic group converted to
    the consumer protocol would bring (skewed, partial, possibly holding unsubscribed topics)."""
    kind = rnd.random()
    out: dict[str, list] = {}
    if kind < 0.25:
        return out
    ids = sorted(members)
    weights = {m: rnd.choice((1, 1, 2, 5)) for m in ids}
    for t, n in topics.items():
        for p in range(n):
            if rnd.random() < 0.15:
                continue  # not in anybody's target (e.g. a partition added since)
            subs = [m for m in ids if t in members[m]["topics"]]
            if rnd.random() < 0.05 or not subs:
                subs = ids  # a member holding a topic it no longer subscribes to
            m = rnd.choices(subs, [weights[s] for s in subs])[0]
            out.setdefault(m, []).append([t, p])
    return out


def generate_chain(rnd: random.Random, chain_id: int, max_steps: int) -> tuple[dict, dict]:
    """One chain: the first group state with its previous target, then membership changes."""
    feat: Counter = Counter()
    n_topics = rnd.randint(1, 4)
    names = [f"t{k}" for k in range(n_topics)]
    big = rnd.random() < 0.1
    topics = {t: rnd.randint(0, 40 if big else 12) for t in names}
    style = rnd.choice(("short", "hex", "uuid"))
    homogeneous = rnd.random() < 0.5
    common = sorted(rnd.sample(names, rnd.randint(1, n_topics))) if homogeneous else None
    if common is not None and rnd.random() < 0.1:
        common = common + ["gone"]  # a subscribed topic that does not exist
    static = rnd.random() < 0.25
    counter = [0]

    def new_member() -> tuple[str, dict]:
        counter[0] += 1
        mid = _member_id(rnd, style, counter[0])
        spec: dict[str, Any] = {"topics": _subscribe(rnd, names, common)}
        if static and rnd.random() < 0.6:
            spec["instance"] = f"instance-{counter[0]:03d}"
        return mid, spec

    members = dict(new_member() for _ in range(rnd.randint(1, 8)))
    steps = [{"topics": dict(topics), "members": {m: dict(s) for m, s in members.items()}}]
    initial = _initial_target(rnd, members, topics)
    feat["initial_target"] += bool(initial)
    for _ in range(rnd.randint(0, max_steps - 1)):
        step: dict[str, Any] = {}
        change = rnd.random()
        if change < 0.3 or not members:
            mid, spec = new_member()
            members[mid] = spec
            feat["join"] += 1
        elif change < 0.55 and len(members) > 1:
            del members[rnd.choice(sorted(members))]
            feat["leave"] += 1
        elif change < 0.65 and any("instance" in s for s in members.values()):
            old = rnd.choice(sorted(m for m, s in members.items() if "instance" in s))
            counter[0] += 1
            new = _member_id(rnd, style, counter[0])
            members[new] = members.pop(old)
            step["renamed"] = {old: new}
            feat["static_rejoin"] += 1
        elif change < 0.8:
            m = rnd.choice(sorted(members))
            members[m] = dict(members[m], topics=sorted(rnd.sample(names, rnd.randint(1, n_topics))))
            common = None
            feat["resubscribe"] += 1
        elif change < 0.9:
            t = rnd.choice(names)
            topics[t] = topics.get(t, 0) + rnd.randint(1, 6)  # (re)created when it was deleted
            feat["partitions_added"] += 1
        else:
            t = rnd.choice(names)
            if len(topics) > 1 and t in topics:
                del topics[t]
                feat["topic_deleted"] += 1
            else:
                topics[t] = topics.get(t, 0) + 1
        step["topics"] = dict(topics)
        step["members"] = {m: dict(s) for m, s in members.items()}
        steps.append(step)
    return {"id": chain_id, "seed": rnd.randrange(2**31), "initial": initial, "steps": steps}, feat


def chains(n_scenarios: int, seed: int = DEFAULT_SEED, max_steps: int = 5) -> tuple[list[dict], Counter]:
    """Chains holding at least ``n_scenarios`` steps in total (the last chain is cut to fit)."""
    rnd = random.Random(seed)
    out: list[dict] = []
    feats: Counter = Counter()
    total = 0
    while total < n_scenarios:
        c, f = generate_chain(rnd, len(out), max_steps)
        c["steps"] = c["steps"][: n_scenarios - total]
        total += len(c["steps"])
        out.append(c)
        feats.update(f)
    return out, feats


# --------------------------------------------------------------------------------------------
# Running both sides
# --------------------------------------------------------------------------------------------


def build_java() -> Path:
    """The harness jar (peers/java), rebuilt with Maven when a source is newer."""
    sources = [JAVA_DIR / "pom.xml", *(JAVA_DIR / "src").rglob("*")]
    newest = max(p.stat().st_mtime for p in sources if p.is_file())
    if not JAVA_JAR.exists() or JAVA_JAR.stat().st_mtime < newest:
        subprocess.run(["mvn", "-q", "-B", "package"], cwd=JAVA_DIR, check=True, stdout=subprocess.DEVNULL)
    return JAVA_JAR


def run_java(chain_docs: list[dict], assignor: str, extra_classpath: tuple[Path, ...] = ()) -> list[list[dict]]:
    """Java's steps for every chain; ``extra_classpath`` adds jars (kassign's broker plugin)."""
    return [row["steps"] for row in run_java_rows(chain_docs, assignor, extra_classpath)]


def run_java_rows(chain_docs: list[dict], assignor: str, extra_classpath: tuple[Path, ...] = ()) -> list[dict]:
    """ServerDiff's output line for every chain, in order: ``{"id", "steps", "topic_ids"}``."""
    jar = build_java()
    lines = "\n".join(json.dumps({**c, "assignor": assignor}) for c in chain_docs) + "\n"
    classpath = os.pathsep.join(str(p) for p in (jar, *extra_classpath))
    proc = subprocess.run(
        ["java", "-Xmx1g", "-XX:+UseSerialGC", "-cp", classpath, "kassign.peers.ServerDiff"],
        input=lines,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ServerDiff failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out: dict[int, dict] = {}
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        out[row["id"]] = row
    return [out[c["id"]] for c in chain_docs]


def java_plans(assignor: str, step: dict, previous: Mapping[str, list], seed: int = 1) -> dict:
    """Java's plans (``broker``, ``sorted``, ``shuffled``) for one group state and previous target."""
    chain = {
        "id": 0,
        "seed": seed,
        "initial": {m: [list(tp) for tp in v] for m, v in previous.items()},
        "steps": [step],
    }
    return run_java([chain], assignor)[0][0]


def as_assignment(raw: Mapping[str, Any]) -> Assignment:
    return {m: sorted((t, p) for t, p in tps) for m, tps in raw.items()}


def kassign_step(strategy: str, step: dict, previous: Mapping[str, list]) -> Assignment:
    import kassign

    members = {
        m: kassign.Member(
            spec["topics"],
            owned_partitions=[tuple(tp) for tp in previous.get(m, [])],
            group_instance_id=spec.get("instance"),
        )
        for m, spec in step["members"].items()
    }
    res = kassign.assign(strategy, members, step["topics"])
    return {m: sorted((tp[0], tp[1]) for tp in tps) for m, tps in res.items()}


def previous_targets(chain: dict, java_steps: list[dict]) -> list[dict]:
    """The target assignment each step starts from, as the Java driver kept it (renames applied)."""
    prev = dict(chain["initial"])
    out = []
    for step, res in zip(chain["steps"], java_steps):
        for old, new in step.get("renamed", {}).items():
            if old in prev:
                prev[new] = prev.pop(old)
        prev = {m: v for m, v in prev.items() if m in step["members"]}
        out.append(prev)
        broker = res["broker"]
        if "error" not in broker:
            prev = {m: [list(tp) for tp in tps] for m, tps in broker.items()}
    return out


# --------------------------------------------------------------------------------------------
# Judging
# --------------------------------------------------------------------------------------------


def validity_error(step: dict, result: Assignment) -> str | None:
    """Every partition of an existing subscribed topic assigned exactly once, to a subscriber."""
    topics = step["topics"]
    seen: dict[tuple[str, int], str] = {}
    for m, tps in result.items():
        if m not in step["members"]:
            return f"unknown member {m}"
        subs = set(step["members"][m]["topics"])
        for t, p in tps:
            if t not in subs:
                return f"{m} got {t}-{p} without subscribing"
            if t not in topics or not 0 <= p < topics[t]:
                return f"{m} got nonexistent {t}-{p}"
            if (t, p) in seen:
                return f"{t}-{p} given to {seen[(t, p)]} and {m}"
            seen[(t, p)] = m
    want = {
        (t, p) for spec in step["members"].values() for t in spec["topics"] if t in topics for p in range(topics[t])
    }
    if set(seen) != want:
        return f"{len(want - set(seen))} partitions unassigned"
    return None


def homogeneous(step: dict) -> bool:
    return len({frozenset(s["topics"]) for s in step["members"].values()}) <= 1


def kept(previous: Mapping[str, list], result: Assignment) -> int:
    return sum(len({tuple(tp) for tp in previous.get(m, [])} & set(tps)) for m, tps in result.items())


def loads(result: Assignment) -> list[int]:
    return sorted(len(v) for v in result.values())


def uniform_rule(step: dict, previous: Mapping[str, list], kas: Assignment, java: Assignment) -> str:
    """What the iteration order decided, when kassign's plan and the broker's differ."""
    if not homogeneous(step):
        if loads(kas) != loads(java):
            return "heterogeneous: member order steers the deal and the balancing moves (Java's own loads differ)"
        if kept(previous, kas) != kept(previous, java):
            return "heterogeneous: member order steers the deal and the balancing moves (Java's own kept count differs)"
        return "heterogeneous: member order steers the deal and the balancing moves (same loads and kept count)"
    per_member = {m: len(v) for m, v in kas.items()} != {m: len(v) for m, v in java.items()}
    if per_member:
        return "homogeneous: member order decides which members hold the extra partitions"
    kept_k = {m: {tuple(tp) for tp in previous.get(m, [])} & set(v) for m, v in kas.items()}
    kept_j = {m: {tuple(tp) for tp in previous.get(m, [])} & set(v) for m, v in java.items()}
    if kept_k != kept_j:
        return "homogeneous: partition order decides which partitions an over-capacity member gives back"
    return "homogeneous: member and topic order decide which free partition goes to which member"


def judge_uniform(step: dict, previous: Mapping[str, list], kas: Assignment, res: dict) -> tuple[str, str, dict]:
    bad = validity_error(step, kas)
    if bad:
        return "kassign-invalid", bad, {}
    if "error" in res["broker"]:
        return "java-error", res["broker"]["error"], {}
    java = as_assignment(res["broker"])
    bad = validity_error(step, java)
    if bad:
        return "java-invalid", bad, {}
    fig = {
        "same_loads": loads(kas) == loads(java),
        "same_kept": kept(previous, kas) == kept(previous, java),
        "kassign_kept": kept(previous, kas),
        "java_kept": kept(previous, java),
        "kassign_sumsq": sum(x * x for x in loads(kas)),
        "java_sumsq": sum(x * x for x in loads(java)),
    }
    if kas == java:
        return "equal", "identical", fig
    sorted_java = as_assignment(res["sorted"]) if "error" not in res["sorted"] else None
    if sorted_java is not None and sorted_java == kas:
        rule = uniform_rule(step, previous, kas, java)
        if homogeneous(step) and not (fig["same_loads"] and fig["same_kept"]):
            return "unexplained", "homogeneous plans differ in loads or kept count: " + rule, fig
        return "order-dependent", rule, fig
    return "unexplained", "differs from Java in canonical order too", fig


def judge_range(step: dict, kas: Assignment, res: dict) -> tuple[str, str]:
    bad = validity_error(step, kas)
    if bad:
        return "kassign-invalid", bad
    if "error" in res["broker"]:
        return "java-error", res["broker"]["error"]
    if kas == as_assignment(res["broker"]):
        if "error" not in res["sorted"] and kas != as_assignment(res["sorted"]):
            return "unexplained", "equal to the broker's plan but not to Java in canonical order"
        return "equal", "identical"
    return "unexplained", "differs from the broker's plan"


def run(n: int, seed: int = DEFAULT_SEED, progress: bool = False) -> dict[str, Any]:
    t0 = time.time()
    docs, feats = chains(n, seed)
    java_u = run_java(docs, "uniform")
    java_r = run_java(docs, "range")
    t_java = time.time() - t0
    outcomes = {"server-uniform": Counter(), "server-range": Counter()}
    rules: Counter = Counter()
    failures: list[dict] = []
    stats: Counter = Counter()
    done = 0
    for chain, ju, jr in zip(docs, java_u, java_r):
        prevs = previous_targets(chain, ju)
        for k, (step, prev, ru, rr) in enumerate(zip(chain["steps"], prevs, ju, jr)):
            done += 1
            kind = "homogeneous" if homogeneous(step) else "heterogeneous"
            stats[kind] += 1
            stats["with_previous_target"] += any(prev.values())
            stats["static_members"] += any("instance" in s for s in step["members"].values())
            kas = kassign_step("server-uniform", step, prev)
            outcome, rule, fig = judge_uniform(step, prev, kas, ru)
            outcomes["server-uniform"][outcome] += 1
            rules[rule] += 1
            if outcome == "order-dependent":
                stats[f"order_dependent_{kind}"] += 1
                stats["order_dependent_same_loads"] += fig["same_loads"]
                stats["order_dependent_same_kept"] += fig["same_kept"]
                if not fig["same_loads"]:
                    better = fig["kassign_sumsq"] < fig["java_sumsq"]
                    stats["loads_differ_kassign_more_balanced" if better else "loads_differ_kassign_less_balanced"] += 1
                if not fig["same_kept"]:
                    more = fig["kassign_kept"] > fig["java_kept"]
                    stats["kept_differs_kassign_keeps_more" if more else "kept_differs_kassign_keeps_fewer"] += 1
            if "error" not in ru["sorted"] and "error" not in ru["broker"]:
                stats["java_sorted_equals_broker"] += as_assignment(ru["sorted"]) == as_assignment(ru["broker"])
                stats["kassign_equals_java_sorted"] += as_assignment(ru["sorted"]) == kas
            if "error" not in ru["shuffled"] and "error" not in ru["broker"]:
                stats["java_shuffled_equals_broker"] += as_assignment(ru["shuffled"]) == as_assignment(ru["broker"])
            if outcome not in ("equal", "order-dependent"):
                failures.append(
                    {
                        "chain": chain["id"],
                        "step": k,
                        "strategy": "server-uniform",
                        "outcome": outcome,
                        "rule": rule,
                        "step_doc": step,
                        "previous": prev,
                        "kassign": kas,
                        "java": ru,
                    }
                )
            # server-range ignores the previous target; the same members and topics.
            kr = kassign_step("server-range", step, prev)
            outcome, rule = judge_range(step, kr, rr)
            outcomes["server-range"][outcome] += 1
            if outcome != "equal":
                failures.append(
                    {
                        "chain": chain["id"],
                        "step": k,
                        "strategy": "server-range",
                        "outcome": outcome,
                        "rule": rule,
                        "step_doc": step,
                        "kassign": kr,
                        "java": rr,
                    }
                )
            if progress and done % 2000 == 0:
                print(f"  judged {done}/{n}", file=sys.stderr)
    return {
        "scenarios": done,
        "chains": len(docs),
        "seed": seed,
        "seconds": round(time.time() - t0, 1),
        "java_seconds": round(t_java, 1),
        "features": dict(sorted(feats.items())),
        "shapes": dict(sorted(stats.items())),
        "outcomes": {s: dict(sorted(c.items())) for s, c in outcomes.items()},
        "uniform_rules": dict(sorted(rules.items(), key=lambda kv: -kv[1])),
        "failures": failures,
    }


def report(summary: dict[str, Any], json_path: str | None) -> int:
    """Print a differential run's summary (failures counted), write it whole to ``json_path`` if
    given, and return the exit status: 1 when any scenario failed."""
    brief = {k: v for k, v in summary.items() if k != "failures"}
    brief["failures"] = len(summary["failures"])
    print(json.dumps(brief, indent=2))
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(summary, indent=1))
    return 1 if summary["failures"] else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=int(os.environ.get("KASSIGN_SERVER_DIFF_SCENARIOS", "10000")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("KASSIGN_SERVER_DIFF_SEED", DEFAULT_SEED)))
    ap.add_argument("--json", help="write the summary (and failing scenarios) here")
    args = ap.parse_args(argv)
    summary = run(args.scenarios, args.seed, progress=True)
    return report(summary, args.json)


if __name__ == "__main__":
    sys.exit(main())
