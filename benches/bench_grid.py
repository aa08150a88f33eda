"""pytest-benchmark suite over the scenario grid (docs/benchmark-shapes.md), fresh and round 2, for every
strategy kassign has, with the in-process Python contenders (kassign end to end, kassign core, the
kassign adapters, and, on groups small enough to finish, kassign_reference, kafka-python and
aiokafka).

    make bench                                    # smoke sizes
    KASSIGN_BENCH_FULL=1 make bench               # the full grid (long)
    .venv/bin/python -m pytest benches/bench_grid.py --benchmark-only -k "np-2100 and sticky"

Java and franz-go are not in this suite (they run in their own processes): the side-by-side report
with them is `python benches/run_all.py` (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES.parent))  # the repo root: the peers package

from peers import contenders as C  # noqa: E402
from peers import scenarios as S  # noqa: E402

FULL = os.environ.get("KASSIGN_BENCH_FULL") == "1"
SHAPES = S.grid_shapes() if FULL else S.smoke_shapes()
SIZES = {s.name: s.size() for s in SHAPES}
#: The pure-Python contenders take about P x C time; skip them above this (run_all.py caps them instead).
SLOW_LIMIT = int(os.environ.get("KASSIGN_BENCH_SLOW_LIMIT", 2100 * 2100))
FAST = ("kassign", "kassign-core", "kassign-kafka-python", "kassign-aiokafka")
SLOW = ("kassign-reference", "kafka-python", "aiokafka")

try:
    import kassign

    KASSIGN_STRATEGIES = [s for s in C.STRATEGIES if s in kassign.STRATEGIES]
except ImportError:  # pragma: no cover
    KASSIGN_STRATEGIES = []


def _cases():
    for name in S.scenario_names(smoke=not FULL):
        p, n = SIZES[name.split("/")[0]]
        for strategy in KASSIGN_STRATEGIES:
            for contender in FAST + SLOW:
                if contender in SLOW and p * n > SLOW_LIMIT:
                    continue
                yield pytest.param(name, strategy, contender, id=f"{name}-{strategy}-{contender}")


_DOCS: dict[str, dict] = {}


def _doc(name: str) -> dict:
    if name not in _DOCS:
        _DOCS.clear()  # keep one (possibly large) scenario in memory at a time
        _DOCS[name] = json.loads(S.scenario_path(name, smoke=not FULL).read_text())
    return _DOCS[name]


@pytest.mark.parametrize(("scenario", "strategy", "contender"), list(_cases()))
def test_assign(benchmark, scenario, strategy, contender):
    doc = _doc(scenario)
    prep = C.PYTHON_CONTENDERS[contender][0](doc, strategy)
    if prep is None:
        pytest.skip(f"{contender} has no {strategy!r}")
    call, convert = prep
    if contender == "kafka-python" and strategy == "roundrobin":
        try:
            call()
        except KeyError as e:  # its known bug on unequal subscriptions
            pytest.xfail(f"kafka-python roundrobin raises KeyError {e} on unequal subscriptions")
    p, n = SIZES[scenario.split("/")[0]]
    rounds = 3 if p * n > 10**7 else 10
    benchmark.group = f"{scenario} {strategy}"
    benchmark.extra_info.update({"partitions": p, "members": n, "contender": contender})
    result = benchmark.pedantic(call, rounds=rounds, iterations=1, warmup_rounds=1)
    q = C.quality(doc, convert(result))
    benchmark.extra_info.update(q)
    assert q["valid"]
