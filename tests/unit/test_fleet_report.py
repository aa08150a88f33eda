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
from oracles.test_fleet_evaluate import random_group


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


# -- recommendations, exports, colours ------------------------------------------------------------


@pytest.fixture(scope="module")
def written(run, tmp_path_factory):
    """The report's directory, written once for the tests below."""
    out = tmp_path_factory.mktemp("written")
    write_report(run, str(out), processes=1)
    return out


def test_report_writes_recommendations_for_every_group(run, written):
    import pandas as pd

    from kassign.fleet.recommend import COLUMNS

    tmp_path = written
    page = _page(str(tmp_path / "report.html"))
    rec = pd.read_csv(tmp_path / "recommendations.csv")
    assert list(rec.columns) == list(COLUMNS)
    groups = set(run.results.column("group_id").to_pylist())
    assert set(rec.group_id) == groups and len(rec) == len(groups)
    assert set(rec.action) <= {"keep", "switch", "review"}
    # a switch names a strategy that ran, and how; a keep names the current strategy
    sw = rec[rec.action == "switch"]
    assert set(sw.recommended) <= set(run.strategies) and sw.how.notna().all() and sw.steps.notna().all()
    keep = rec[rec.action == "keep"]
    assert (keep.recommended == keep.current).all()
    assert "<h2 id='recommendations'>Recommendations</h2>" in page
    for g in groups:
        assert f"<td class='t'>{g}</td>" in page


def test_prometheus_export_reads_back_with_prometheus_clients_parser(run, written):
    import json

    from prometheus_client.parser import text_string_to_metric_families

    tmp_path = written
    text = (tmp_path / "kassign_fleet.prom").read_text(encoding="utf-8")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert {
        "kafka_consumergroup_kassign_max_member_lag",
        "kafka_consumergroup_kassign_lag_vs_bound",
        "kafka_consumergroup_kassign_count_spread",
        "kafka_consumergroup_kassign_partitions_moved",
        "kafka_consumergroup_kassign_recommended",
        "kafka_consumergroup_kassign_current",
    } <= set(families)
    assert all(f.type == "gauge" for f in families.values())

    def samples(name):
        return {(s.labels["cluster"], s.labels["group"], s.labels["strategy"]): s.value for s in families[name].samples}

    rows = [r for r in run.results.to_pylist() if r["status"] == "ok"]
    moved = samples("kafka_consumergroup_kassign_partitions_moved")
    spread = samples("kafka_consumergroup_kassign_count_spread")
    lag = samples("kafka_consumergroup_kassign_max_member_lag")
    assert len(moved) == len(rows)
    for r in rows:
        key = (r["cluster"], r["group_id"], r["strategy"])
        assert moved[key] == r["moves"] and spread[key] == r["count_spread"]
        assert lag.get(key) == (float(r["max_member_lag"]) if r["max_member_lag"] is not None else None)
    # one recommended strategy per group with a decision, none for a group left for review
    import pandas as pd

    rec = pd.read_csv(tmp_path / "recommendations.csv")
    chosen = samples("kafka_consumergroup_kassign_recommended")
    for g, action, strategy in zip(rec.group_id, rec.action, rec.recommended):
        ones = [k[2] for k, v in chosen.items() if k[1] == g and v == 1]
        assert ones == ([] if action == "review" else [strategy]), g
    # the same rows as JSON
    doc = json.loads((tmp_path / "kassign_fleet.json").read_text(encoding="utf-8"))
    assert len(doc["rows"]) == len(rows)
    by_key = {(r["cluster"], r["group"], r["strategy"]): r for r in doc["rows"]}
    for key, v in moved.items():
        assert by_key[key]["moves"] == v
        assert by_key[key]["recommended"] == chosen[key]


def test_every_strategy_label_has_a_distinct_colour_and_marker(run, tmp_path, monkeypatch):
    labels = strategy_labels()
    assert len(labels) >= 12
    st = plots.styles(labels)
    assert len({c for c, _ in st.values()}) == len(labels)
    assert len({m for _, m in st.values()}) == len(labels)
    # and the figures draw them: every legend entry of a strategy has its colour and marker
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: figures.append(fig))
    ok = run.results.to_pandas()
    ok = ok[ok.status == "ok"]
    from matplotlib.colors import to_hex

    for name in ("lag_balance", "lag_vs_bound", "count_spread", "assign_time"):
        plots.draw(name, ok, labels, str(tmp_path))
        handles, names = figures[-1].axes[0].get_legend_handles_labels()
        drawn = {n: (to_hex(h.get_color()), h.get_marker()) for h, n in zip(handles, names) if n in labels}
        assert drawn == {s: st[s] for s in labels if s in drawn}, name
        assert len(set(drawn.values())) == len(drawn) >= 12, name


def test_migration_figure_draws_server_assignors_in_the_runs_styles(run, tmp_path, monkeypatch):
    from matplotlib.colors import to_hex

    from kassign.fleet import migration

    labels = strategy_labels()
    st = plots.styles(labels)
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: figures.append(fig))
    view = migration.migration_view(run.results.to_pandas())
    assert migration.plot(view, str(tmp_path), labels) is not None
    handles, names = figures[-1].axes[1].get_legend_handles_labels()
    drawn = {n: (to_hex(h.get_color()), h.get_marker()) for h, n in zip(handles, names)}
    assert drawn and drawn == {n: st[n] for n in drawn}


def test_plan_scoped_metrics_hold_each_groups_current_and_recommended_strategy(run, written, tmp_path):
    import pandas as pd
    from prometheus_client.parser import text_string_to_metric_families

    from kassign.fleet import export

    df = run.results.to_pandas()
    rec = pd.read_csv(written / "recommendations.csv")
    prom, _ = export.write(df, rec, str(tmp_path), scope="plan")
    families = {f.name: f for f in text_string_to_metric_families(open(prom, encoding="utf-8").read())}
    got = {
        (s.labels["group"], s.labels["strategy"])
        for s in families["kafka_consumergroup_kassign_partitions_moved"].samples
    }
    ok = {(g, s) for g, s, st in zip(df.group_id, df.strategy, df.status) if st == "ok"}
    want = set()
    for g, current, chosen in zip(rec.group_id, rec.current, rec.recommended):
        want |= {(g, s) for s in (current, chosen) if isinstance(s, str) and (g, s) in ok}
    assert got == want and len(got) < len(ok)
    with pytest.raises(ValueError, match="metrics scope"):
        export.rows(df, rec, "some")


def test_unknown_metrics_scope_fails_before_spark(tmp_path):
    from kassign.fleet.config import FleetConfig, FleetError
    from kassign.fleet.job import run_fleet

    with pytest.raises(FleetError, match="metrics: expected one of all, plan"):
        run_fleet(FleetConfig(metrics="everything", out=str(tmp_path)), spark=None)
