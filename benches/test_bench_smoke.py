"""Smoke run of the benchmark suite at tiny sizes, so the harnesses (Python contenders, the Java
kafka-clients harness, the franz-go harness) cannot rot. The full run is `make bench-full`.

Needs Java + Maven and Go on PATH: the harnesses are built by the repo's own files (peers/java/pom.xml
fetches kafka-clients from Maven Central, peers/go/go.mod + go.sum fetch franz-go from the Go
module proxy) on first use; on a fresh machine that first build adds a few minutes once. Set
KASSIGN_SKIP_PEERS=1 to run without the peers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHES = REPO / "benches"
sys.path.insert(0, str(BENCHES))  # run_all, the script under test

from peers import contenders as C  # noqa: E402
from peers import scenarios as S  # noqa: E402

# Builds and runs the Java and Go peer harnesses.
pytestmark = pytest.mark.slow

SKIP_PEERS = os.environ.get("KASSIGN_SKIP_PEERS") == "1"
PEERS = () if SKIP_PEERS else ("java", "franz-go")


def test_scenarios_are_seeded_and_valid():
    shape = S.shape_by_name("java-half", smoke=True)
    a, b = S.build_documents(shape), S.build_documents(shape)
    assert a == b
    r2 = a["round2"]
    first = next(iter(r2["members"].values()))
    assert "owned" not in first
    owned = [tuple(tp) for m in r2["members"].values() for tp in m.get("owned", ())]
    assert len(owned) == len(set(owned))
    for m in r2["members"].values():
        assert all(t in m["topics"] for t, _ in m.get("owned", ()))


def test_quality_lower_bound_formula():
    doc = {
        "topics": {"t": 4},
        "members": {
            "a": {"topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]], "generation": 1},
            "b": {"topics": ["t"], "owned": [["t", 3]], "generation": 1},
        },
    }
    q = C.quality(doc, {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]})
    assert q == {"valid": True, "unassigned": 0, "spread": 0, "topic_spread": 0, "moves": 1, "moves_lb": 1}
    q = C.quality(doc, {"a": [("t", 0), ("t", 0)], "b": []})
    assert not q["valid"] and q["unassigned"] == 3


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("strategy", C.STRATEGIES)
def test_peer_assign_mode_is_valid(peer, strategy):
    path = S.scenario_path("java-half/round2", smoke=True)
    doc = json.loads(path.read_text())
    result = C.peer_assign(peer, strategy, str(path))
    assert set(result) == set(doc["members"])
    q = C.quality(doc, result)
    assert q["valid"]
    if strategy != "cooperative-sticky":
        assert q["unassigned"] == 0


def test_smoke_run_writes_report(tmp_path):
    md, png, res = tmp_path / "BENCHMARKS.md", tmp_path / "plot.png", tmp_path / "results.json"
    # Two scenarios (fresh on the N = P shape, round 2 on heterogeneous subscriptions) keep this
    # under a minute on a loaded 2-core machine; `make bench-smoke` runs every smoke shape.
    cmd = [
        sys.executable,
        str(BENCHES / "run_all.py"),
        "--smoke",
        "--md",
        str(md),
        "--png",
        str(png),
        "--results",
        str(res),
        "--scenarios",
        "np-10/",
        "java-half/round2",
    ]
    if SKIP_PEERS:
        cmd += ["--contenders", *[c for c in C.ALL_CONTENDERS if c not in C.PEER_CONTENDERS]]
    subprocess.run(cmd, check=True, timeout=900, cwd=REPO)
    data = json.loads(res.read_text())
    cells = data["cells"]
    text = md.read_text()
    assert "## Headlines" in text and png.stat().st_size > 0
    # kassign ran every strategy it has, validly.
    import kassign

    for strategy in set(kassign.STRATEGIES) & set(C.STRATEGIES):
        cell = cells["np-10/fresh|" + strategy + "|kassign"]
        assert cell["status"] == "ok", cell
        assert cell["quality"]["valid"]
    # Every peer ran every strategy on every scenario, validly.
    for peer in PEERS:
        for key, cell in cells.items():
            if key.endswith("|" + peer):
                assert cell["status"] == "ok", (key, cell)
                assert cell["quality"]["valid"], key


def test_missing_strategy_and_missing_reference_are_not_applicable(monkeypatch):
    """A kassign build without a strategy, or without kassign_reference, is "n/a", not a crash."""
    import kassign

    doc = {"topics": {"t": 2}, "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}}}
    monkeypatch.setattr(kassign, "STRATEGIES", tuple(s for s in kassign.STRATEGIES if s != "sticky"))
    assert C.PYTHON_CONTENDERS["kassign"][0](doc, "sticky") is None
    assert C.PYTHON_CONTENDERS["kassign-core"][0](doc, "sticky") is None
    assert not C.python_supports("kassign", "sticky")
    monkeypatch.setitem(sys.modules, "kassign_reference", None)  # import now raises ImportError
    assert C.PYTHON_CONTENDERS["kassign-reference"][0](doc, "sticky") is None
    import run_all

    assert run_all.cell_text({"status": "unsupported"}, 60, None) == "n/a"


def test_resume_keeps_peer_cells_and_redoes_kassign_cells_of_another_build(tmp_path):
    """Cached peer cells do not depend on kassign's commit; kassign's own cells are re-measured."""
    res = tmp_path / "results.json"
    peer = "kafka-python" if SKIP_PEERS else "franz-go"
    cmd = [
        sys.executable,
        str(BENCHES / "run_all.py"),
        "--smoke",
        "--md",
        str(tmp_path / "b.md"),
        "--png",
        str(tmp_path / "p.png"),
        "--results",
        str(res),
        "--scenarios",
        "np-10/fresh",
        "--strategies",
        "range",
        "--contenders",
        "kassign",
        peer,
    ]
    subprocess.run(cmd, check=True, timeout=300, cwd=REPO, capture_output=True)
    data = json.loads(res.read_text())
    k_key, p_key = "np-10/fresh|range|kassign", f"np-10/fresh|range|{peer}"
    assert "kassign_commit" in data["cells"][k_key] and "kassign_commit" not in data["cells"][p_key]
    data["cells"][k_key]["kassign_commit"] = "0000000"
    data["cells"][k_key]["median"] = -1.0
    data["cells"][p_key]["median"] = -2.0
    res.write_text(json.dumps(data))
    subprocess.run(cmd + ["--resume"], check=True, timeout=300, cwd=REPO, capture_output=True)
    data = json.loads(res.read_text())
    assert data["cells"][p_key]["median"] == -2.0  # kept
    assert data["cells"][k_key]["median"] > 0  # measured again on this build
    assert len(data["meta_runs"]) == 2


def _cell(median: float, samples: list[float]) -> dict:
    return {"status": "ok", "median": median, "samples": samples}


def test_compare_flags_only_cells_slower_beyond_the_noise(tmp_path, capsys):
    import run_all

    old = {
        "a|range|kassign": _cell(1.0, [0.9, 1.0, 1.1]),
        "b|range|kassign": _cell(1.0, [0.9, 1.0, 1.1]),
        "c|range|kassign": _cell(1.0, [0.9, 1.0, 2.5]),
        "d|range|java": _cell(1.0, [1.0]),
    }
    new = {
        "a|range|kassign": _cell(1.2, [1.15, 1.2, 1.3]),  # 1.2x: within the factor
        "b|range|kassign": _cell(2.0, [1.9, 2.0, 2.1]),  # 2x, every new call slower: flagged
        "c|range|kassign": _cell(2.0, [1.9, 2.0, 2.1]),  # 2x, but the old spread reaches 2.5 s
        "d|range|java": {"status": "error", "error": "boom"},  # finished before, fails now: flagged
    }
    (tmp_path / "old.json").write_text(json.dumps({"cells": old}))
    (tmp_path / "new.json").write_text(json.dumps({"cells": new}))
    assert run_all.compare(tmp_path / "old.json", tmp_path / "new.json") == 1
    out = capsys.readouterr().out
    summary = out.split("slower beyond the noise")[1].splitlines()[1:]
    flagged = [line.split(":")[0].strip() for line in summary if line.startswith("  ")]
    assert flagged == ["b|range|kassign", "d|range|java"]
    assert "kassign's own cells: 1; the peers' (the machine's noise): 1" in out
    new.pop("b|range|kassign")
    new.pop("d|range|java")
    (tmp_path / "new.json").write_text(json.dumps({"cells": new}))
    assert run_all.compare(tmp_path / "old.json", tmp_path / "new.json") == 0


def test_default_full_run_covers_every_cell_or_names_why_not():
    """Every (scenario, strategy, contender) of the full grid is either in the default run or
    left out with a reason the report prints, never silently missing."""
    import run_all

    args = run_all.argparse.Namespace(smoke=False, scenarios=None, contenders=None, strategies=None)
    planned, _, _ = run_all.plan(args)
    planned_set = set(planned)
    assert len(planned_set) == len(planned)
    for name in S.scenario_names(False):
        for strategy in C.STRATEGIES + C.SERVER_STRATEGIES:
            for contender in C.ALL_CONTENDERS:
                why = run_all.left_out(name, strategy, contender)
                assert ((name, strategy, contender) in planned_set) == (why is None), (name, strategy, contender)
    # The headline table's cells are all in the run (the pure-Python clients excepted at 1M).
    for sc, _, strategies in run_all.HEADLINE_ROWS:
        for st in strategies:
            for c in ("kassign", "kassign-wire", "java", "franz-go"):
                assert (sc, st, c) in planned_set
