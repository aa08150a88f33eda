"""The fleet report in a real headless Chromium (tests/support/headless_chromium.py): the page renders with
its tables and figures, nothing is wider than the window, and a click on a column header sorts the
table's rows by that column (numbers as numbers, both directions, "-" last)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pyarrow as pa
import pytest

from kassign.fleet.evaluate import evaluate_group_table
from kassign.fleet.group import strategy_labels
from kassign.fleet.report import write_report
from oracles.test_fleet_evaluate import random_group
from support.headless_chromium import Browser


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    labels = strategy_labels()
    tables = []
    for seed in range(30):
        m, p = random_group(random.Random(seed), seed % 9 == 0)
        # a long group id: a table with it must scroll inside its container, not widen the page
        gid = f"g{seed:02}" + ("-a-very-long-consumer-group-name" * 4 if seed == 3 else "")
        tables.append(evaluate_group_table("k", gid, m, p, labels, churn_rounds=1, seed=seed))
    run = SimpleNamespace(
        results=pa.concat_tables(tables),
        strategies=labels,
        snapshot="/a/long/snapshot/path/" + "x" * 300,
        spark_seconds=1.0,
        lag_source="test",
        seconds=1.0,
    )
    out = tmp_path_factory.mktemp("report")
    path = write_report(run, str(out), processes=1)
    with Browser(width=1024, height=768) as browser:
        yield browser.open(f"file://{path}")


def test_renders_tables_and_figures(page):
    assert page.eval("document.title") == "kassign fleet report"
    assert page.eval("document.querySelectorAll('table.sortable').length") >= 4
    assert page.eval("document.querySelectorAll('table:not(.sortable)').length") == 0
    # every figure loaded
    images = page.eval("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
    assert len(images) >= 6 and all(done and width > 0 for done, width in images)
    assert page.eval("!!document.getElementById('recommendations')")


def test_nothing_overflows_horizontally(page):
    sizes = page.eval("[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]")
    assert sizes[0] <= sizes[1], sizes
    # each table fits its scroll container's box, which fits the page; wide ones scroll inside it
    boxes = page.eval(
        "Array.from(document.querySelectorAll('.scroll')).map(d => [d.getBoundingClientRect().right,"
        " getComputedStyle(d).overflowX])"
    )
    width = sizes[1]
    assert boxes and all(right <= width and overflow == "auto" for right, overflow in boxes)
    # the per-strategy summary is wider than the window here: it scrolls in its container
    assert page.eval("Array.from(document.querySelectorAll('.scroll')).some(d => d.scrollWidth > d.clientWidth)")


def test_header_sticks_while_the_table_scrolls(page):
    assert page.eval("getComputedStyle(document.querySelector('table.sortable th')).position") == "sticky"


COLUMN = """
(function (tableIndex, col) {
  var t = document.querySelectorAll('table.sortable')[tableIndex];
  return Array.from(t.tBodies[0].rows).map(r => r.cells[col].textContent.trim());
})"""


def _numbers(cells):
    return [float(c.replace(",", "").rstrip("%x")) for c in cells if c != "-"]


def test_click_sorts_by_a_numeric_column_both_ways(page):
    # the recommendations' per-group table, column "partitions" (index 3)
    index = page.eval(
        "Array.from(document.querySelectorAll('table.sortable')).findIndex("
        "t => Array.from(t.tHead.rows[0].cells).some(c => c.textContent === 'why'))"
    )
    assert index >= 0
    before = page.eval(f"{COLUMN}({index}, 3)")
    assert len(set(before)) > 3 and before != sorted(before, key=lambda c: float(c.replace(",", "")))
    click = f"document.querySelectorAll('table.sortable')[{index}].tHead.rows[0].cells[3].click()"
    page.eval(click)
    up = page.eval(f"{COLUMN}({index}, 3)")
    assert _numbers(up) == sorted(_numbers(before)) and sorted(up) == sorted(before)
    assert (
        page.eval(
            f"document.querySelectorAll('table.sortable')[{index}].tHead.rows[0].cells[3].getAttribute('aria-sort')"
        )
        == "ascending"
    )
    page.eval(click)
    down = page.eval(f"{COLUMN}({index}, 3)")
    assert _numbers(down) == sorted(_numbers(before), reverse=True)


def test_click_sorts_text_and_puts_missing_values_last(page):
    index = page.eval(
        "Array.from(document.querySelectorAll('table.sortable')).findIndex("
        "t => Array.from(t.tHead.rows[0].cells).some(c => c.textContent === 'why'))"
    )
    # column "group" (1): text, alphabetical
    page.eval(f"document.querySelectorAll('table.sortable')[{index}].tHead.rows[0].cells[1].click()")
    groups = page.eval(f"{COLUMN}({index}, 1)")
    assert groups == sorted(groups, key=str.lower)
    # column "lag cut" (9): numbers with %, "-" where there is no switch or no lag: last both ways
    for _ in range(2):
        page.eval(f"document.querySelectorAll('table.sortable')[{index}].tHead.rows[0].cells[9].click()")
        cells = page.eval(f"{COLUMN}({index}, 9)")
        assert "-" in cells
        first_missing = cells.index("-")
        assert all(c == "-" for c in cells[first_missing:])
        nums = _numbers(cells)
        assert nums in (sorted(nums), sorted(nums, reverse=True))
