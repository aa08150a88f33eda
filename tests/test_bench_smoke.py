"""Smoke run of the benchmark suite at tiny sizes, so the harnesses (Python contenders, the Java
kafka-clients harness, the franz-go harness) cannot rot. The full run is `make bench-full`.

Needs Java + Maven and Go on PATH (they fetch kafka-clients and franz-go from their registries on
first use). Set KASSIGN_SKIP_PEERS=1 to run without the peers.
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
sys.path.insert(0, str(BENCHES))

import contenders as C  # noqa: E402
import scenarios as S  # noqa: E402

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
    cmd = [sys.executable, str(BENCHES / "run_all.py"), "--smoke", "--md", str(md), "--png", str(png),
           "--results", str(res)]
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
