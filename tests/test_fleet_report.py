"""The fleet report without Spark: its figures drawn in worker processes (kassign.fleet.plots.Drawing)
are the same files, and the page the same, as when the driver draws them one after the other."""

from __future__ import annotations

import os
import random
import re
from types import SimpleNamespace

import pyarrow as pa
import pytest

from kassign.fleet import plots
from kassign.fleet.evaluate import evaluate_group_table
from kassign.fleet.group import strategy_labels
from kassign.fleet.report import write_report
from test_fleet_evaluate import random_group


@pytest.fixture(scope="module")
def run():
    labels = strategy_labels()
    tables = []
    for seed in range(40):
        rng = random.Random(seed)
        m, p = random_group(rng, seed % 7 == 0)
        tables.append(evaluate_group_table("k", f"g{seed:02}", m, p, labels, churn_rounds=2, seed=seed))
    results = pa.concat_tables(tables)
    assert {"ok", "error"} <= set(results.column("status").to_pylist())
    return SimpleNamespace(
        results=results, strategies=labels, snapshot="random", spark_seconds=1.0, lag_source="test", seconds=1.0
    )


def _page(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return re.sub(r"Generated [0-9T:-]+", "Generated <now>", f.read())


def test_figures_drawn_in_processes_equal_the_drivers(run, tmp_path):
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    probe = plots.Drawing(run.results.to_pandas(), run.strategies, str(there), processes=2)
    assert probe.pool is not None  # so the comparison below is between the two modes
    probe.pool.shutdown(cancel_futures=True)
    page_here = write_report(run, str(here), processes=1)
    page_there = write_report(run, str(there), processes=2)
    assert _page(page_here) == _page(page_there)
    pngs = sorted(f for f in os.listdir(here) if f.endswith(".png"))
    assert pngs == sorted(f for f in os.listdir(there) if f.endswith(".png"))
    assert {f"{name}.png" for name in ("lag_balance", "lag_vs_bound", "count_spread", "moves", "rack_locality")} <= set(
        pngs
    )
    for name in pngs:
        assert (here / name).read_bytes() == (there / name).read_bytes(), name
    for name in pngs:
        assert f'<img src="{name}"' in _page(page_here)


def test_default_draws_small_results_in_processes_and_large_ones_here(run, monkeypatch):
    ok = run.results.to_pandas()
    small = plots.Drawing(ok, run.strategies, "/nonexistent", processes=None)
    try:
        assert small.pool is not None or (os.cpu_count() or 1) == 1
    finally:
        if small.pool is not None:
            small.pool.shutdown(cancel_futures=True)
    monkeypatch.setattr(plots, "PARALLEL_MAX_ROWS", len(ok) - 1)
    large = plots.Drawing(ok, run.strategies, "/nonexistent", processes=None)
    assert large.pool is None and large.futures == []


def test_a_failing_figure_fails_the_report_in_either_mode(run, tmp_path):
    # a figure's error is the report's error, not a silent fallback
    for processes in (1, 2):
        with pytest.raises(OSError):
            plots.Drawing(run.results.to_pandas(), run.strategies, str(tmp_path / "missing"), processes).result()
