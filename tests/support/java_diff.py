"""Differential testing of kassign against Apache Kafka's Java assignors.

Random scenarios (seeded, deterministic) go through Java's RangeAssignor, RoundRobinAssignor,
StickyAssignor and CooperativeStickyAssignor (kafka-clients, in one JVM:
``peers/java/.../Differential.java``) and through kassign. Every result is judged by the
independent oracles of ``tests/support/oracles.py``, then kassign's and Java's results are compared and
every difference is given an *outcome* and a *rule* (docs/java_differential.md has the table):

range, roundrobin
    ``equal`` (as sets per member) or ``unexplained``. There is no documented difference for these.

sticky, cooperative-sticky
    Both results are measured with the same yardsticks:

    * balance: sum of squared loads (every path) and max - min (effectively uniform groups);
    * moves: partitions a member validly owned before the round (``oracles.resolve_ownership``:
      dropped claims, highest generation wins, equal top generations void the claim) that it does
      not hold after it.

    For ``cooperative-sticky`` both sides run their own follow-up rounds (every member rejoins
    owning its round-1 result at the next generation) until nothing changes (at most 4 rounds);
    balance and moves are measured on the converged assignment against the ownership *before*
    round 1, so a partition withheld in round 1 and given to another member in round 2 is one move.
    Round-1 figures (withheld partitions, rounds needed) are reported beside them.

    Outcomes: ``equal``; ``kassign-better`` (strictly lower sum of squares, or the same balance and
    strictly fewer moves); ``explained`` (same balance and moves, different sets); ``java-exception``
    (Java threw); ``java-invalid`` (Java's result fails the validity or completeness oracle);
    ``kassign-worse`` (a kassign bug: worse balance, or the same balance with more moves);
    ``unexplained`` (a difference no documented rule covers). Each non-equal outcome carries the
    rule that explains it, decided from the scenario and the two results (``classify``).

Run ``python tests/support/java_diff.py --scenarios 10000 --json out/java-diff.json`` (``make
test-java-diff``) for the full run; ``tests/differential/test_java_differential.py`` runs a smaller one in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
sys.path[:0] = [str(TESTS), str(REPO)]  # tests/ (support) and the root (peers)

from support import oracles as O  # noqa: E402

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
JAVA_DIR = REPO / "peers" / "java"
JAVA_JAR = JAVA_DIR / "target" / "kassign-java-harness.jar"
MAX_ROUNDS = 8
DEFAULT_SEED = 20240808

Doc = dict[str, Any]
Assignment = dict[str, list[tuple[str, int]]]


# --------------------------------------------------------------------------------------------
# Scenario generation
# --------------------------------------------------------------------------------------------


def _member_ids(rnd: random.Random, n: int) -> list[str]:
    style = rnd.random()
    if style < 0.4:
        return [f"c{k:02d}" for k in range(n)]
    if style < 0.8:  # random ids: Java's HashMap order differs from id order
        ids: set[str] = set()
        while len(ids) < n:
            ids.add(f"consumer-{rnd.randrange(16**6):06x}")
        return sorted(ids)
    # Kafka-style ids: client id + uuid-ish suffix
    return [f"app-{k}-{rnd.randrange(16**8):08x}" for k in range(n)]


def _random_assignment(rnd: random.Random, subs: Mapping[str, set[str]], topics: Mapping[str, int]) -> Assignment:
    """A plausible previous round: each partition to a random subscriber, skewed towards a few."""
    out: Assignment = {m: [] for m in subs}
    weights = {m: rnd.choice((1, 1, 2, 4)) for m in subs}
    for t, n in topics.items():
        cand = [m for m in sorted(subs) if t in subs[m]]
        if not cand:
            continue
        balanced = rnd.random() < 0.5
        for p in range(n):
            m = cand[p % len(cand)] if balanced else rnd.choices(cand, [weights[c] for c in cand])[0]
            out[m].append((t, p))
    return out


def generate(rnd: random.Random) -> tuple[Doc, dict[str, Any]]:
    """One scenario document (python/kassign/scenario.py format) and its features."""
    feat: dict[str, Any] = {}
    n_topics = rnd.randint(1, 5)
    names = [f"t{k}" for k in range(n_topics)]
    big = rnd.random() < 0.1
    topics = {t: (rnd.randint(0, 40) if big else rnd.randint(0, 10)) for t in names}
    if rnd.random() < 0.1:
        topics[names[0]] = 0
    n_members = rnd.randint(1, 9)
    ids = _member_ids(rnd, n_members)
    uniform = rnd.random() < 0.5
    feat["uniform_raw"] = uniform
    if uniform:
        common = set(rnd.sample(names, rnd.randint(1, n_topics)))
        subs = {m: set(common) for m in ids}
    else:
        subs = {m: set(rnd.sample(names, rnd.randint(1, n_topics))) for m in ids}
    deleted = rnd.random() < 0.15
    if deleted:  # a subscribed topic that no longer exists
        feat["deleted_topic"] = True
        for m in ids:
            if uniform or rnd.random() < 0.5:
                subs[m].add("gone")

    members: dict[str, dict[str, Any]] = {m: {"topics": sorted(subs[m])} for m in ids}
    has_history = rnd.random() < 0.85
    feat["history"] = has_history
    if has_history:
        # The previous round: some current members are new, some previous members have left,
        # subscriptions and partition counts may have changed since.
        prev_ids = [m for m in ids if rnd.random() < 0.8]
        leavers = [f"left-{k}" for k in range(rnd.randint(0, 2))]
        prev_subs = {}
        for m in prev_ids:
            s = set(subs[m]) - {"gone"}
            if rnd.random() < 0.15:
                s = set(rnd.sample(names, rnd.randint(1, n_topics)))
            if deleted and rnd.random() < 0.7:
                s.add("gone")
            prev_subs[m] = s
        for m in leavers:
            prev_subs[m] = set(rnd.sample(names, rnd.randint(1, n_topics)))
        prev_topics = dict(topics)
        if deleted:
            prev_topics["gone"] = rnd.randint(1, 6)
        if rnd.random() < 0.1:  # partitions added since the previous round
            t = rnd.choice(names)
            prev_topics[t] = max(0, topics[t] - rnd.randint(1, 3))
            feat["grown_topic"] = True
        prev = _random_assignment(rnd, prev_subs, prev_topics)
        gen = rnd.randint(1, 30)
        for m in prev_ids:
            g = gen
            if rnd.random() < 0.15:
                g = gen - rnd.randint(1, 5)
                feat["stale_generation"] = True
            if rnd.random() < 0.05:
                g = -1
                feat["no_generation"] = True
            members[m]["owned"] = [list(tp) for tp in prev[m]]
            members[m]["generation"] = g
        owners = [m for m in prev_ids if members[m].get("owned")]
        # Conflicting claims: a partition listed by two (or more) members, same or other generation.
        if owners and rnd.random() < 0.35:
            feat["conflict"] = True
            for _ in range(rnd.randint(1, 4)):
                src = rnd.choice(owners)
                tp = rnd.choice(members[src]["owned"])
                k = 2 if rnd.random() < 0.7 else rnd.randint(3, 4)
                others = [m for m in ids if m != src]
                for m in rnd.sample(others, min(k - 1, len(others))):
                    members[m].setdefault("owned", []).append(list(tp))
                    if "generation" not in members[m]:
                        members[m]["generation"] = rnd.choice((gen, gen - 1, gen + 1, -1))
        # A claim beyond the partition count (a recreated, smaller topic).
        if rnd.random() < 0.08:
            live = [t for t in names if topics[t] > 0]
            if live:
                feat["out_of_range"] = True
                m = rnd.choice(ids)
                t = rnd.choice(live)
                members[m].setdefault("owned", []).append([t, topics[t] + rnd.randint(0, 3)])
                members[m].setdefault("generation", gen)
        # A member listing the same partition twice.
        if owners and rnd.random() < 0.03:
            feat["duplicate_claim"] = True
            m = rnd.choice(owners)
            members[m]["owned"].append(list(rnd.choice(members[m]["owned"])))
        for m in ids:
            if "owned" in members[m]:
                members[m]["owned"].sort()
    if rnd.random() < 0.15:
        feat["static"] = True
        used: set[str] = set()
        for m in ids:
            if rnd.random() < 0.6:
                gid = f"instance-{rnd.randrange(1000):03d}"
                if gid not in used:
                    used.add(gid)
                    members[m]["group_instance_id"] = gid
    doc: Doc = {"topics": topics, "members": members}
    if rnd.random() < 0.1:
        feat["racks"] = True
        racks = ["r0", "r1", "r2"]
        for m in ids:
            if rnd.random() < 0.8:
                members[m]["rack"] = rnd.choice(racks)
        doc["partition_racks"] = [
            [t, p, sorted(rnd.sample(racks, rnd.randint(1, 2)))] for t in names for p in range(topics[t])
        ]
    return doc, feat


def scenarios(n: int, seed: int = DEFAULT_SEED) -> list[tuple[Doc, dict[str, Any]]]:
    rnd = random.Random(seed)
    return [generate(rnd) for _ in range(n)]


# --------------------------------------------------------------------------------------------
# Running Java and kassign
# --------------------------------------------------------------------------------------------


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise RuntimeError(
            f"{tool!r} is not on PATH: differential testing needs Java 17+ and Maven "
            f"(e.g. apt-get install openjdk-17-jdk-headless maven)"
        )
    return path


def build_java() -> Path:
    """The harness jar, built by peers/java/pom.xml (rebuilt when a source is newer)."""
    require("java")
    from peers import contenders  # the peers' own builder (mvn -q -B package)

    if not JAVA_JAR.exists() or JAVA_JAR.stat().st_mtime < max(
        p.stat().st_mtime for p in [JAVA_DIR / "pom.xml", *(JAVA_DIR / "src").rglob("*")] if p.is_file()
    ):
        require("mvn")
    return contenders.build_java()


def run_java(docs: list[Doc], strategies_per_doc: list[tuple[str, ...]], timeout: float = 20.0) -> list[dict[str, Any]]:
    """Run each doc through the listed Java assignors in one JVM; returns per doc
    {strategy: {"assignment": {...}} | {"error": "..."} | {"timeout": s}}."""
    jar = build_java()
    lines = []
    for k, (doc, strategies) in enumerate(zip(docs, strategies_per_doc)):
        lines.append(json.dumps({**doc, "id": k, "strategies": list(strategies)}))
    # -OmitStackTraceInFastThrow: a hot exception keeps its stack (the classifier reads the frame).
    cmd = [
        require("java"),
        "-Xmx1g",
        "-XX:+UseSerialGC",
        "-XX:-OmitStackTraceInFastThrow",
        "-cp",
        str(jar),
        "kassign.peers.Differential",
        "--timeout",
        str(timeout),
    ]
    proc = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"Java differential harness failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out: list[dict[str, Any] | None] = [None] * len(docs)
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        out[row["id"]] = row["results"]
    missing = [k for k, r in enumerate(out) if r is None]
    if missing:
        raise RuntimeError(f"Java harness returned no result for scenarios {missing[:10]}")
    return out  # type: ignore[return-value]


def kassign_assign(doc: Doc, strategy: str) -> Assignment:
    from kassign.scenario import parse_scenario

    result = parse_scenario(doc).assign(strategy)
    return {m: [(tp[0], tp[1]) for tp in tps] for m, tps in result.items()}


def java_error(res: Mapping[str, Any]) -> str | None:
    if "assignment" in res:
        return None
    if "error" in res:
        return f"{res['error']} at {res.get('where')}"
    return f"timeout after {res.get('timeout')} s"


def java_assignment(res: Mapping[str, Any]) -> Assignment:
    return {m: [(tp[0], tp[1]) for tp in tps] for m, tps in res["assignment"].items()}


def next_round_doc(doc: Doc, result: Assignment) -> Doc:
    """Every member rejoins owning ``result`` at the next generation (the cooperative follow-up)."""
    gens = [m.get("generation", -1) for m in doc["members"].values()]
    gen = max([g for g in gens] + [0]) + 1
    members = {}
    for m, spec in doc["members"].items():
        new = {k: v for k, v in spec.items() if k not in ("owned", "generation")}
        new["owned"] = [list(tp) for tp in result.get(m, [])]
        new["generation"] = gen
        members[m] = new
    return {**doc, "members": members}


# --------------------------------------------------------------------------------------------
# Measuring and classifying
# --------------------------------------------------------------------------------------------


def _members(doc: Doc):
    from kassign.scenario import parse_scenario

    return parse_scenario(doc).members


def moves(resolved: Mapping[str, set], result: Assignment) -> int:
    sets = O.as_sets(result)
    return sum(len(own - sets.get(m, set())) for m, own in resolved.items())


def spread(result: Assignment) -> int:
    ls = [len(v) for v in result.values()]
    return max(ls) - min(ls) if ls else 0


def validity_error(members, topics, result: Assignment, complete: bool = True) -> str | None:
    try:
        O.check_validity(members, topics, result)
        if complete:
            O.check_completeness(members, topics, result)
    except O.OracleViolation as e:
        return str(e)
    return None


def scenario_traits(doc: Doc) -> dict[str, Any]:
    """Facts about a scenario that the documented rules refer to (computed from the input only)."""
    topics = doc["topics"]
    members = doc["members"]
    t: dict[str, Any] = {}
    claims: dict[tuple[str, int], list[str]] = defaultdict(list)
    dup = False
    oor = False
    for m, spec in members.items():
        owned = [tuple(tp) for tp in spec.get("owned", [])]
        if len(owned) != len(set(owned)):
            dup = True
        for tp in set(owned):
            if tp[0] in topics and topics[tp[0]] > 0 and tp[1] >= topics[tp[0]]:
                oor = True
            claims[tp].append(m)
    t["out_of_range"] = oor
    # A member below the group's top generation listing a partition of an existing topic it does
    # not subscribe to (Java's general path keeps it: leaks or NullPointerException).
    top = max((spec.get("generation", -1) for spec in members.values()), default=-1)
    t["stale_unsubscribed_claim"] = any(
        spec.get("generation", -1) < top and tp[0] not in spec["topics"] and topics.get(tp[0], 0) > 0
        for spec in members.values()
        for tp in spec.get("owned", [])
    )
    t["duplicate_claim"] = dup
    # 3+ claimants of a partition (Java resolves them in HashMap order).
    t["three_claimants"] = any(len(v) >= 3 for v in claims.values())
    t["racks"] = bool(doc.get("partition_racks")) and any(spec.get("rack") for spec in members.values())
    raw_sets = {frozenset(spec["topics"]) for spec in members.values()}
    t["constrained"] = len(raw_sets) <= 1  # Java's path choice: raw topic sets all equal
    return t


def stale_unsubscribed_leaks(doc: Doc, java_result: Assignment) -> bool | None:
    """Java's general path hands a member a partition of a topic it no longer subscribes to when
    the member listed it as owned at a generation below the group's maximum (observed in
    kafka-clients 4.4.0; minimal case in docs/java_differential.md). True when *every* assignment
    to a non-subscriber in ``java_result`` is such a leaked stale claim (None when there is none)."""
    members = doc["members"]
    top = max((spec.get("generation", -1) for spec in members.values()), default=-1)
    leaks = 0
    for m, tps in java_result.items():
        spec = members[m]
        owned = {tuple(tp) for tp in spec.get("owned", [])}
        for tp in tps:
            if tp[0] in spec["topics"]:
                continue
            if tuple(tp) not in owned or spec.get("generation", -1) >= top:
                return False
            leaks += 1
    return True if leaks else None


def _quota_keeper_tie(members, topics, resolved) -> bool:
    """Constrained path: more members validly own >= ceil(P/N) than there are q+1 slots, so Java's
    HashMap order picks which of them keep q+1 (docs/java-differences.md)."""
    total = len(O.expected_partitions(members, topics))
    n = len(members)
    if n == 0:
        return False
    q, r = divmod(total, n)
    if r == 0:
        return False
    return sum(1 for s in resolved.values() if len(s) >= q + 1) > r


def _quality(members, topics, resolved, result: Assignment) -> dict[str, int]:
    return {"sumsq": O.sum_of_squares(result), "spread": spread(result), "moves": moves(resolved, result)}


def classify_exact(kas: Assignment, java_res: Mapping[str, Any]) -> tuple[str, str]:
    """range / roundrobin: equal as sets, else unexplained (no documented difference)."""
    if "assignment" not in java_res:
        return "java-exception", "unexplained: Java failed on a range/roundrobin input: " + json.dumps(java_res)[:200]
    if O.as_sets(kas) == O.as_sets(java_assignment(java_res)):
        return "equal", "identical"
    return "unexplained", "range/roundrobin differ from Java"


def classify_sticky(
    doc: Doc,
    kas_final: Assignment,
    java_final: Assignment | None,
    java_error: str | None,
    *,
    kas_first: Assignment | None = None,
    java_first: Assignment | None = None,
    java_rounds: int | None = None,
) -> tuple[str, str, dict[str, Any]]:
    """(outcome, rule, figures) for sticky or cooperative-sticky (``*_final`` after convergence)."""
    members = _members(doc)
    topics = doc["topics"]
    traits = scenario_traits(doc)
    resolved = O.resolve_ownership(members, topics)
    uniform = O.is_uniform(members, topics)
    k = _quality(members, topics, resolved, kas_final)
    fig: dict[str, Any] = {"kassign": k}
    if java_error is not None:
        if traits["out_of_range"] and "IllegalStateException" in java_error:
            return "java-exception", "out-of-range claim (Java throws; kassign drops it)", fig
        if traits["stale_unsubscribed_claim"] and "GeneralAssignmentBuilder" in java_error:
            return (
                "java-exception",
                "stale claim of an unsubscribed topic (Java's general path throws NullPointerException)",
                fig,
            )
        return "java-exception", "unexplained: Java threw " + java_error[:200], fig
    assert java_final is not None
    bad = validity_error(members, topics, java_final)
    if bad is not None:
        if traits["out_of_range"]:
            return "java-invalid", "out-of-range claim (Java assigns a nonexistent partition or double-assigns)", fig
        if (
            "does not subscribe" in bad
            and traits["stale_unsubscribed_claim"]
            and stale_unsubscribed_leaks(doc, java_final)
        ):
            return (
                "java-invalid",
                "stale claim of an unsubscribed topic (Java's general path keeps it for a non-subscriber)",
                fig,
            )
        if java_rounds is not None and java_rounds >= MAX_ROUNDS and "unassigned" in bad:
            return "java-invalid", f"Java's cooperative rounds did not converge in {MAX_ROUNDS}", fig
        return "java-invalid", "unexplained: Java's result is invalid: " + bad, fig
    j = _quality(members, topics, resolved, java_final)
    fig["java"] = j
    if kas_first is not None and java_first is not None:
        fig["withheld"] = {
            "kassign": len(O.missing_partitions(members, topics, kas_first)),
            "java": len(O.missing_partitions(members, topics, java_first)),
        }
    if O.as_sets(kas_final) == O.as_sets(java_final):
        return "equal", "identical", fig
    # kassign worse on balance is a bug, whatever else differs.
    if k["sumsq"] > j["sumsq"] or (uniform and k["spread"] > j["spread"]):
        return (
            "kassign-worse",
            f"kassign balance worse (sumsq {k['sumsq']} > {j['sumsq']} or spread {k['spread']} > {j['spread']})",
            fig,
        )
    if k["sumsq"] < j["sumsq"]:
        fig["balance_costs_moves"] = k["moves"] > j["moves"]
        path = O.find_cost_reducing_path(members, topics, java_final)
        if path is None:  # cannot happen: a lower sum of squares exists, so Java's is not optimal
            return "unexplained", "Java's balance is worse but has no cost-reducing path (oracle inconsistency)", fig
        if len(path) >= 3:
            return "kassign-better", "single-hop balance (Java misses a multi-hop chain)", fig
        return "kassign-better", "Java leaves a direct move unmade (single-hop check with owner preference)", fig
    # Same balance from here on.
    if k["moves"] > j["moves"]:
        return "kassign-worse", f"kassign moves {k['moves']} > Java {j['moves']} at equal balance", fig
    if k["moves"] < j["moves"]:
        if traits["racks"]:
            return (
                "kassign-better",
                "rack: Java revokes rack-mismatched owned partitions, kassign never moves for locality",
                fig,
            )
        if traits["three_claimants"] or traits["duplicate_claim"]:
            return "kassign-better", "claims: 3+ claimants in HashMap order / duplicated claim lost", fig
        if not traits["constrained"]:
            return (
                "kassign-better",
                "general path: Java keeps greedily then single moves, kassign keeps the min-cost-flow optimum",
                fig,
            )
        return (
            "unexplained",
            f"constrained path: kassign moves fewer ({k['moves']} < {j['moves']}) with no rack/claim rule",
            fig,
        )
    # Same balance, same moves, different sets.
    if traits["racks"]:
        return "explained", "tie: rack placement (kassign matches racks only for partitions that move)", fig
    if traits["three_claimants"] or traits["duplicate_claim"]:
        return "explained", "tie: 3+ claimants resolved in HashMap order / duplicated claim", fig
    if not traits["constrained"]:
        return (
            "explained",
            "tie: general-path placement (Java TreeSet greedy + single moves; kassign class deal), same load and moves",
            fig,
        )
    if _quota_keeper_tie(members, topics, resolved):
        return "explained", "tie: HashMap order picks which over-quota owners keep q+1", fig
    if not uniform:
        return "explained", "tie: raw subscriptions equal but effective ones not (deleted topics)", fig
    return "unexplained", "constrained path: same balance and moves but different sets, no tie rule applies", fig


# --------------------------------------------------------------------------------------------
# The whole run
# --------------------------------------------------------------------------------------------


def _converge_kassign(doc: Doc) -> tuple[Assignment, Assignment, int]:
    first = kassign_assign(doc, "cooperative-sticky")
    cur, cur_doc, rounds = first, doc, 1
    while rounds < MAX_ROUNDS:
        nd = next_round_doc(cur_doc, cur)
        nxt = kassign_assign(nd, "cooperative-sticky")
        if O.as_sets(nxt) == O.as_sets(cur):
            break
        cur, cur_doc, rounds = nxt, nd, rounds + 1
    return first, cur, rounds


def run(n: int, seed: int = DEFAULT_SEED, progress: bool = False) -> dict[str, Any]:
    """Generate ``n`` scenarios, run both sides, classify. Returns the summary and the rows."""
    t0 = time.time()
    pairs = scenarios(n, seed)
    docs = [d for d, _ in pairs]
    features = Counter(f for _, feats in pairs for f, v in feats.items() if v)
    features["heterogeneous_raw"] = sum(1 for _, f in pairs if not f["uniform_raw"])
    features["effectively_uniform"] = sum(1 for d in docs if O.is_uniform(_members(d), d["topics"]))
    java = run_java(docs, [STRATEGIES] * len(docs))
    t_java1 = time.time() - t0

    # Cooperative follow-up rounds on Java's own results (one JVM per round).
    java_coop_first: list[Assignment | None] = [None] * n
    java_coop_final: list[Assignment | None] = [None] * n
    java_coop_rounds = [0] * n
    java_coop_error: list[str | None] = [None] * n
    pending: list[tuple[int, Doc]] = []
    for i, doc in enumerate(docs):
        r = java[i]["cooperative-sticky"]
        if "assignment" in r:
            a = java_assignment(r)
            java_coop_first[i] = java_coop_final[i] = a
            java_coop_rounds[i] = 1
            if validity_error(_members(doc), doc["topics"], a, complete=False) is None:
                pending.append((i, next_round_doc(doc, a)))
        else:
            java_coop_error[i] = java_error(r)
    while pending:
        res = run_java([d for _, d in pending], [("cooperative-sticky",)] * len(pending))
        nxt_pending = []
        for (i, d), r in zip(pending, res):
            r = r["cooperative-sticky"]
            if "assignment" not in r:
                java_coop_error[i] = f"follow-up round {java_coop_rounds[i] + 1}: {java_error(r)}"
                continue
            a = java_assignment(r)
            if O.as_sets(a) == O.as_sets(java_coop_final[i]):
                continue
            java_coop_final[i] = a
            java_coop_rounds[i] += 1
            if java_coop_rounds[i] < MAX_ROUNDS:
                nxt_pending.append((i, next_round_doc(d, a)))
        pending = nxt_pending
    t_java = time.time() - t0

    counts: dict[str, Counter] = {s: Counter() for s in STRATEGIES}
    rules: dict[str, Counter] = {s: Counter() for s in STRATEGIES}
    failures: list[dict[str, Any]] = []
    kassign_invalid: list[dict[str, Any]] = []
    rounds_hist = {"kassign": Counter(), "java": Counter()}
    moves_total = {s: Counter() for s in ("sticky", "cooperative-sticky")}
    withheld_total = Counter()
    for i, doc in enumerate(docs):
        members = _members(doc)
        topics = doc["topics"]
        for s in ("range", "roundrobin"):
            kas = kassign_assign(doc, s)
            bad = validity_error(members, topics, kas)
            if bad:
                kassign_invalid.append({"scenario": i, "strategy": s, "error": bad, "doc": doc})
            outcome, rule = classify_exact(kas, java[i][s])
            counts[s][outcome] += 1
            rules[s][rule] += 1
            if outcome not in ("equal",):
                failures.append(
                    {
                        "scenario": i,
                        "strategy": s,
                        "outcome": outcome,
                        "rule": rule,
                        "doc": doc,
                        "kassign": kas,
                        "java": java[i][s],
                    }
                )
        # sticky (eager): one round.
        kas = kassign_assign(doc, "sticky")
        bad = validity_error(members, topics, kas)
        if bad:
            kassign_invalid.append({"scenario": i, "strategy": "sticky", "error": bad, "doc": doc})
        r = java[i]["sticky"]
        jerr = java_error(r)
        outcome, rule, fig = classify_sticky(doc, kas, java_assignment(r) if jerr is None else None, jerr)
        counts["sticky"][outcome] += 1
        rules["sticky"][rule] += 1
        if fig.get("balance_costs_moves"):
            moves_total["sticky"]["better_balance_with_more_moves"] += 1
        if "java" in fig:
            moves_total["sticky"]["kassign"] += fig["kassign"]["moves"]
            moves_total["sticky"]["java"] += fig["java"]["moves"]
        if outcome in ("kassign-worse", "unexplained") or rule.startswith("unexplained"):
            failures.append(
                {
                    "scenario": i,
                    "strategy": "sticky",
                    "outcome": outcome,
                    "rule": rule,
                    "doc": doc,
                    "kassign": kas,
                    "java": r,
                    "figures": fig,
                }
            )
        # cooperative-sticky: converged results, round-1 figures beside them.
        kfirst, kfinal, krounds = _converge_kassign(doc)
        rounds_hist["kassign"][krounds] += 1
        try:
            O.check_validity(members, topics, kfirst)
            O.check_cooperative_safety(O.raw_owned(members), kfirst)
            O.check_withholding_justified(members, topics, kfirst)
            bad = validity_error(members, topics, kfinal) or (None if krounds <= 2 else f"needed {krounds} rounds")
        except O.OracleViolation as e:
            bad = str(e)
        if bad:
            kassign_invalid.append({"scenario": i, "strategy": "cooperative-sticky", "error": bad, "doc": doc})
        jerr = java_coop_error[i]
        if jerr is None:
            rounds_hist["java"][java_coop_rounds[i]] += 1
        outcome, rule, fig = classify_sticky(
            doc,
            kfinal,
            java_coop_final[i],
            jerr,
            kas_first=kfirst,
            java_first=java_coop_first[i],
            java_rounds=java_coop_rounds[i],
        )
        counts["cooperative-sticky"][outcome] += 1
        rules["cooperative-sticky"][rule] += 1
        if fig.get("balance_costs_moves"):
            moves_total["cooperative-sticky"]["better_balance_with_more_moves"] += 1
        if "java" in fig:
            moves_total["cooperative-sticky"]["kassign"] += fig["kassign"]["moves"]
            moves_total["cooperative-sticky"]["java"] += fig["java"]["moves"]
        if "withheld" in fig:
            withheld_total["kassign"] += fig["withheld"]["kassign"]
            withheld_total["java"] += fig["withheld"]["java"]
        if outcome in ("kassign-worse", "unexplained") or rule.startswith("unexplained"):
            failures.append(
                {
                    "scenario": i,
                    "strategy": "cooperative-sticky",
                    "outcome": outcome,
                    "rule": rule,
                    "doc": doc,
                    "kassign": kfinal,
                    "java": java_coop_final[i],
                    "figures": fig,
                }
            )
        if progress and i % 1000 == 999:
            print(f"  classified {i + 1}/{n}", file=sys.stderr)
    return {
        "scenarios": n,
        "seed": seed,
        "seconds": round(time.time() - t0, 1),
        "java_seconds": round(t_java, 1),
        "java_first_batch_seconds": round(t_java1, 1),
        "features": dict(sorted(features.items())),
        "outcomes": {s: dict(sorted(c.items())) for s, c in counts.items()},
        "rules": {s: dict(sorted(c.items(), key=lambda kv: -kv[1])) for s, c in rules.items()},
        "moves_total": {s: dict(c) for s, c in moves_total.items()},
        "cooperative_round1_withheld_total": dict(withheld_total),
        "cooperative_rounds": {k: dict(sorted(v.items())) for k, v in rounds_hist.items()},
        "failures": failures,
        "kassign_invalid": kassign_invalid,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=int(os.environ.get("KASSIGN_DIFF_SCENARIOS", "10000")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("KASSIGN_DIFF_SEED", DEFAULT_SEED)))
    ap.add_argument("--json", help="write the summary (and failing scenarios) here")
    args = ap.parse_args(argv)
    summary = run(args.scenarios, args.seed, progress=True)
    brief = {k: v for k, v in summary.items() if k not in ("failures", "kassign_invalid")}
    brief["failures"] = len(summary["failures"])
    brief["kassign_invalid"] = len(summary["kassign_invalid"])
    print(json.dumps(brief, indent=2))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(summary, indent=1, default=list))
    return 1 if summary["failures"] or summary["kassign_invalid"] else 0


if __name__ == "__main__":
    sys.exit(main())
