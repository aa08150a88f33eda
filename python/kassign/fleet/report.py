"""The fleet report: per-strategy summary, PNG plots (matplotlib, Agg), HTML page, console table.

Everything here reads the job's result table (one row per group and strategy); nothing is
recomputed.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
from typing import Any

import pyarrow as pa

from ..quality import IMBALANCE_THRESHOLD

#: Columns of the summary table, in order, with their headers.
SUMMARY_COLUMNS = [
    ("strategy", "strategy"),
    ("groups_ok", "groups ok"),
    ("groups_error", "errors"),
    ("spread_le1", "max-min <= 1"),
    ("spread_p95", "max-min p95"),
    ("lag_ratio_median", "lag max/mean median"),
    ("lag_bound_median", "best possible median"),
    ("lag_imbalanced_pct", f"lag max/mean > {IMBALANCE_THRESHOLD:.2f}"),
    ("lag_vs_bound_median", "busiest/bound median"),
    ("lag_vs_bound_p90", "busiest/bound p90"),
    ("lag_vs_bound_mean", "busiest/bound mean"),
    ("lag_worse_than_range_pct", "lag worse than range"),
    ("moves", "moves"),
    ("moved_pct", "moved % of owned"),
    ("rack_locality", "rack-local"),
    ("unassigned", "unassigned"),
    ("violations", "invalid"),
    ("time_s", "assign time s"),
    ("time_p95_ms", "p95 ms/group"),
    ("churn_moves", "churn moves"),
]


def summarize(results: pa.Table, strategies: tuple[str, ...]) -> Any:
    """Per-strategy summary (a pandas DataFrame, one row per strategy in the given order)."""
    import numpy as np
    import pandas as pd

    df = results.to_pandas()
    if "lag_vs_bound" not in df.columns:  # results written before the column existed
        df["lag_vs_bound"] = df.lag_ratio / df.lag_ratio_bound
    key = ["cluster", "group_id"]
    range_max = (
        df[(df.strategy == "range") & (df.status == "ok")].set_index(key).max_member_lag
        if "range" in strategies
        else None
    )
    rows = []
    for s in strategies:
        d = df[df.strategy == s]
        ok = d[d.status == "ok"]
        n_ok = len(ok)
        eligible = ok.rack_eligible.sum()
        owned = (ok.moves + ok.kept).sum()
        lag_groups = ok[ok.lag_ratio.notna()]
        vs = lag_groups.lag_vs_bound.dropna()
        if range_max is not None and len(lag_groups):
            ref = range_max.reindex(pd.MultiIndex.from_frame(lag_groups[key])).to_numpy()
            worse = (lag_groups.max_member_lag.to_numpy() > ref)[~np.isnan(ref.astype(float))]
            worse_pct = worse.mean() if len(worse) else np.nan
        else:
            worse_pct = np.nan
        rows.append(
            {
                "strategy": s,
                "groups_ok": n_ok,
                "groups_error": int((d.status == "error").sum()),
                "spread_le1": (ok.count_spread <= 1).mean() if n_ok else np.nan,
                "spread_p95": ok.count_spread.quantile(0.95) if n_ok else np.nan,
                "lag_ratio_median": lag_groups.lag_ratio.median() if len(lag_groups) else np.nan,
                "lag_bound_median": lag_groups.lag_ratio_bound.median() if len(lag_groups) else np.nan,
                "lag_imbalanced_pct": lag_groups.lag_imbalanced.mean() if len(lag_groups) else np.nan,
                "lag_vs_bound_median": vs.median() if len(vs) else np.nan,
                "lag_vs_bound_p90": vs.quantile(0.9) if len(vs) else np.nan,
                "lag_vs_bound_mean": vs.mean() if len(vs) else np.nan,
                "lag_worse_than_range_pct": worse_pct,
                "moves": int(ok.moves.sum()),
                "moved_pct": ok.moves.sum() / owned if owned else np.nan,
                "rack_locality": ok.rack_local.sum() / eligible if eligible else np.nan,
                "unassigned": int(ok.unassigned.sum()),
                "violations": int(ok.violations.sum()),
                "time_s": ok.time_ms.sum() / 1000.0,
                "time_p95_ms": ok.time_ms.quantile(0.95) if n_ok else np.nan,
                "churn_moves": int(ok.churn_moves.sum()) if ok.churn_moves.notna().any() else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _fmt(col: str, v: Any) -> str:
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if col in ("spread_le1", "lag_imbalanced_pct", "moved_pct", "rack_locality", "lag_worse_than_range_pct"):
        return f"{100 * v:.1f}%"
    if col in ("lag_ratio_median", "lag_bound_median"):
        return f"{v:.2f}"
    if col in ("lag_vs_bound_median", "lag_vs_bound_p90", "lag_vs_bound_mean"):
        return f"{v:.3f}"
    if col in ("time_s",):
        return f"{v:.2f}"
    if col in ("time_p95_ms",):
        return f"{v:.1f}"
    if col in ("spread_p95",):
        return f"{v:g}"
    if isinstance(v, float):
        return f"{v:,.0f}"
    if isinstance(v, int) or hasattr(v, "__int__"):
        try:
            return f"{int(v):,}"
        except (TypeError, ValueError):
            pass
    return str(v)


def console_table(summary: Any) -> str:
    cols = [c for c in SUMMARY_COLUMNS if c[0] in summary.columns]
    if summary["churn_moves"].isna().all():
        cols = [c for c in cols if c[0] != "churn_moves"]
    cells = [[h for _, h in cols]] + [[_fmt(c, r[c]) for c, _ in cols] for _, r in summary.iterrows()]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    lines = []
    for k, row in enumerate(cells):
        lines.append("  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(row, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _td(cell: str) -> str:
    """A table cell: numbers right-aligned, text (names, errors) left-aligned."""
    numeric = cell.replace(",", "").replace(".", "").replace("%", "").replace("-", "").isdigit() or cell == "-"
    if numeric:
        return f"<td>{html.escape(cell)}</td>"
    # long text (a reason, an error) wraps in a column of its own width; short text stays on one line
    return f"<td class='{'t w' if len(cell) > 40 else 't'}'>{html.escape(cell)}</td>"


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    """A table in a scroll container (wide or long tables scroll inside the page, under a sticky
    header), sortable by any column (:data:`SORT_JS`). A cell is a string (escaped here) or
    ``Markup`` (HTML as is)."""
    head = "".join(f"<th scope='col' title='sort by {html.escape(h)}'>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(c) for c in r) + "</tr>" for r in rows)
    return (
        f"<div class='scroll'><table class='sortable'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


class Markup(str):
    """A table cell that is HTML already (a link)."""


def _cell(c: str) -> str:
    return f"<td class='t w'>{c}</td>" if isinstance(c, Markup) else _td(c)


#: The page's style: tables scroll inside their container (both ways, at most 70% of the window's
#: height) under a sticky header; long words (paths) wrap, so nothing widens the page.
CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px;color:#222;overflow-wrap:anywhere}"
    "table{border-collapse:separate;border-spacing:0;font-size:0.85em}td.t{text-align:left}"
    "th,td{border-right:1px solid #ccc;border-bottom:1px solid #ccc;padding:4px 8px;text-align:right;"
    "overflow-wrap:normal;white-space:nowrap}td.w{white-space:normal;min-width:24em;max-width:48em}"
    "th{background:#f3f3f3;position:sticky;top:0;z-index:1;cursor:pointer;user-select:none;white-space:nowrap}"
    "th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
    "td:first-child,th:first-child{text-align:left;border-left:1px solid #ccc}"
    "figure{margin:1.5em 0}img{max-width:100%}"
    "figcaption{font-size:0.9em;color:#555}code{background:#f3f3f3;padding:1px 4px}"
    ".scroll{overflow:auto;max-width:100%;max-height:70vh;margin:1em 0}th{border-top:1px solid #ccc}"
)

#: Sorting for every ``table.sortable``: a click (or Enter) on a header sorts the rows by that
#: column, ascending first, then descending. Numbers (with thousands separators, %, a trailing x)
#: sort as numbers, "-" (no value) last either way, other text alphabetically. Written here, no
#: library: the page works offline.
SORT_JS = """
(function () {
  function key(td) {
    var s = td ? td.textContent.trim() : "";
    if (s === "" || s === "-") return null;
    var t = s.replace(/,/g, "").replace(/[%x]$/, "");
    if (/^[-+]?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?$/i.test(t)) return [0, parseFloat(t)];
    return [1, s.toLowerCase()];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  }
  function sortBy(table, th, col) {
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.map.call(body.rows, function (r, i) { return [key(r.cells[col]), i, r]; });
    rows.sort(function (a, b) {
      if (a[0] === null || b[0] === null) {
        if (a[0] === b[0]) return a[1] - b[1];
        return a[0] === null ? 1 : -1;
      }
      return dir * compare(a[0], b[0]) || a[1] - b[1];
    });
    rows.forEach(function (r) { body.appendChild(r[2]); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, th, col); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th, col); }
      });
    });
  });
})();
"""


def _switch_table(df: Any, strategies: tuple[str, ...], limit: int = 20) -> str | None:
    """Groups whose busiest member's lag would shrink most by switching from their current strategy
    to the most lag-balanced measured one (absolute messages, so near-idle groups do not rank)."""
    ok = df[(df.status == "ok") & df.lag_ratio.notna()]
    cur = ok[ok.strategy == ok.current_protocol]
    if cur.empty:
        return None
    best = ok.sort_values(["max_member_lag", "count_spread", "moves"]).drop_duplicates(["cluster", "group_id"])
    best_lag = dict(zip(zip(best.cluster.tolist(), best.group_id.tolist()), best.max_member_lag.tolist()))
    best = best.set_index(["cluster", "group_id"])
    cur = cur.assign(
        gain=[
            cur_lag - best_lag[(c, g)]
            for c, g, cur_lag in zip(cur.cluster.tolist(), cur.group_id.tolist(), cur.max_member_lag.tolist())
        ]
    )
    top = cur[cur.gain > 0].sort_values("gain", ascending=False).head(limit)
    if top.empty:
        return "<p>No group's busiest member would get less lag under another measured strategy.</p>"
    rows = []
    for _, r in top.iterrows():
        b = best.loc[(r.cluster, r.group_id)]
        rows.append(
            [
                r.cluster,
                r.group_id,
                f"{int(r.members):,}",
                f"{int(r.partitions):,}",
                r.strategy,
                f"{int(r.max_member_lag):,}",
                f"{r.lag_ratio:.2f}",
                b.strategy,
                f"{int(b.max_member_lag):,}",
                f"{b.lag_ratio:.2f}",
                f"{int(b.moves):,}",
            ]
        )
    return _html_table(
        [
            "cluster",
            "group",
            "members",
            "partitions",
            "current",
            "busiest member lag",
            "max/mean",
            "best measured",
            "busiest member lag",
            "max/mean",
            "moves",
        ],
        rows,
    )


def _bound_table(df: Any, strategies: tuple[str, ...], out_dir: str, limit: int = 20) -> str | None:
    """Every group's distance from the lower bound per strategy -> ``lag_vs_bound.csv``; the HTML
    table shows the groups farthest from it under the default lag-aware (or the first strategy)."""
    ok = df[(df.status == "ok") & df.lag_ratio.notna() & df.lag_ratio_bound.notna()]
    if ok.empty:
        return None
    ok = ok.assign(vs=ok.lag_ratio / ok.lag_ratio_bound)
    wide = ok.pivot_table(index=["cluster", "group_id"], columns="strategy", values="vs", aggfunc="first")
    wide = wide[[s for s in strategies if s in wide.columns]]
    sizes = ok.drop_duplicates(["cluster", "group_id"]).set_index(["cluster", "group_id"])[["members", "partitions"]]
    sizes = sizes.astype("int64")
    wide = sizes.join(wide, how="right")
    wide.to_csv(os.path.join(out_dir, "lag_vs_bound.csv"), float_format="%.4f")
    lead = "lag-aware" if "lag-aware" in wide.columns else next((s for s in strategies if s in wide.columns), None)
    if lead is None:
        return None
    top = wide.sort_values(lead, ascending=False).head(limit)
    cols = [s for s in strategies if s in wide.columns]
    rows = [
        [c, g, f"{int(r.members):,}", f"{int(r.partitions):,}"]
        + [("-" if r[s] != r[s] else f"{r[s]:.3f}") for s in cols]
        for (c, g), r in top.iterrows()
    ]
    return _html_table(["cluster", "group", "members", "partitions", *cols], rows)


def _migration_section(
    df: Any, out_dir: str, strategies: tuple[str, ...] = ()
) -> tuple[list[str], tuple[str, str, str] | None]:
    """HTML of the "moving to the consumer protocol" view (kassign.fleet.migration); the full
    per-group view goes to migration.csv."""
    from . import migration as M

    view = M.migration_view(df)
    if view.empty:
        return [], None
    view.to_csv(os.path.join(out_dir, "migration.csv"), index=False)
    t = M.totals(view)
    fig = M.plot(view, out_dir, strategies)
    lost = ", ".join(f"{k} ({v})" for k, v in sorted(t["semantics_lost"].items())) or "none"
    sticky = f"; kassign's sticky would move {t['sticky_moves']:,}" if t["sticky_moves"] is not None else ""
    totals_html = _html_table(
        ["", "groups"],
        [
            ["can move online", f"{t['online']:,}"],
            ["  landing on uniform", f"{t['lands_on_uniform']:,}"],
            ["  landing on range", f"{t['lands_on_range']:,}"],
            ["blocked: custom user data in current assignments", f"{t['blocked']:,}"],
            ["already on the consumer protocol", f"{t['already_consumer']:,}"],
            ["no members", f"{t['no_members']:,}"],
            ["balance (max-min) worse after the switch", f"{t['balance_worse']:,}"],
            ["busiest member's lag higher after the switch", f"{t['busiest_lag_higher']:,}"],
        ],
    )
    movers = view[view.moves.notna()].sort_values(["moves", "moved_pct"], ascending=False).head(20)
    mover_rows = [
        [
            r.cluster,
            r.group_id,
            r.current or "-",
            r.lands_on,
            f"{int(r.members):,}",
            f"{int(r.partitions):,}",
            f"{int(r.moves):,}",
            _fmt("moved_pct", r.moved_pct),
            _fmt("x", r.sticky_moves),
            _fmt("x", r.spread_before),
            _fmt("x", r.spread_after),
            _fmt("x", r.busiest_lag_before),
            _fmt("x", r.busiest_lag_after),
            r.semantics_lost or "-",
            "yes" if r.online else ("-" if r.online is None else "no"),
        ]
        for _, r in movers.iterrows()
    ]
    blocked = view[view.status == "blocked"].head(20)
    parts = [
        "<h2>Moving to the consumer protocol (KIP-848)</h2>",
        "<p>What happens to each group if it moves from the classic protocol to "
        "<code>group.protocol=consumer</code>, where the broker assigns (Apache Kafka 4.4.0's "
        "<code>uniform</code> or <code>range</code>, computed here as <code>server-uniform</code> / "
        "<code>server-range</code> from the members' current assignments). Classic range lands on "
        "<code>range</code>; sticky, cooperative-sticky, roundrobin and custom assignors on "
        "<code>uniform</code> (the broker's default). A member whose current assignment carries user data "
        "blocks the online upgrade. <i>Before</i> is the group's current strategy, <i>after</i> the broker's "
        "first target assignment. All groups: <code>migration.csv</code>.</p>",
        totals_html,
        f"<p>At the switch {t['moves']:,} partitions move ({100 * t['moved_pct']:.1f}% of owned){sticky}. "
        f"Semantics lost: {html.escape(lost)}.</p>",
    ]
    if mover_rows:
        parts += [
            "<h3>Groups that would move most</h3>",
            _html_table(
                [
                    "cluster",
                    "group",
                    "current",
                    "lands on",
                    "members",
                    "partitions",
                    "moved",
                    "moved %",
                    "kassign sticky moves",
                    "max-min before",
                    "max-min after",
                    "busiest lag before",
                    "busiest lag after",
                    "semantics lost",
                    "online",
                ],
                mover_rows,
            ),
        ]
    if not blocked.empty:
        parts += [
            "<h3>Blocked groups</h3>",
            _html_table(
                ["cluster", "group", "current", "reason"],
                [[r.cluster, r.group_id, r.current or "-", r.reason] for _, r in blocked.iterrows()],
            ),
        ]
    return parts, fig


#: Groups the page lists in the recommendations table (switches first); every group is in
#: recommendations.csv.
RECOMMENDATION_ROWS = 500


def docs_base() -> str | None:
    """Where the report's links to kassign's docs point: ``KASSIGN_DOCS_URL`` when set, else the
    docs directory of the source checkout kassign runs from (a ``file:`` URL), else None (the page
    names the documents without a link)."""
    import pathlib

    env = os.environ.get("KASSIGN_DOCS_URL")
    if env:
        return env.rstrip("/") + "/"
    import kassign

    docs = pathlib.Path(kassign.__file__).resolve().parents[2] / "docs"
    return docs.as_uri() + "/" if (docs / "upgrade.md").is_file() else None


def _steps_cell(steps: str | None, base: str | None) -> str:
    if not steps:
        return "-"
    refs = steps.split()
    if base is None:
        return Markup(" ".join(f"<code>{html.escape(r)}</code>" for r in refs))
    return Markup(
        " ".join(f'<a href="{html.escape(base + r.removeprefix("docs/"))}">{html.escape(r)}</a>' for r in refs)
    )


def _recommendation_section(df: Any, strategies: tuple[str, ...], out_dir: str) -> tuple[list[str], Any]:
    """HTML of the recommendations (kassign.fleet.recommend) and the table itself; every group goes
    to recommendations.csv."""
    from . import recommend as R

    rec = R.recommendations(df, strategies)
    rec.to_csv(os.path.join(out_dir, "recommendations.csv"), index=False)
    if rec.empty:
        return [], rec
    t = R.summary(rec)
    a = t["actions"]
    to = ", ".join(f"{k} ({v:,})" for k, v in sorted(t["switch_to"].items(), key=lambda kv: (-kv[1], kv[0])))
    frm = ", ".join(f"{k} ({v:,})" for k, v in sorted(t["switch_from"].items(), key=lambda kv: (-kv[1], kv[0])))
    review = "; ".join(f"{k} ({v:,})" for k, v in t["review_reasons"].items())
    summary_rows = [
        ["groups", f"{t['groups']:,}"],
        ["keep the current strategy", f"{a[R.KEEP]:,}"],
        ["switch", f"{a[R.SWITCH]:,}"],
        ["  for the busiest member's lag", f"{t['for_lag']:,}"],
        ["  for the partition counts", f"{t['for_count']:,}"],
        ["  online (rolling bounces)", f"{t['online']:,}"],
        ["  of them to the consumer protocol", f"{t['to_consumer_protocol']:,}"],
        ["  to", to or "-"],
        ["  from", frm or "-"],
        ["partitions moved at the switches", f"{t['moves']:,}"],
        ["busiest members' lag of the switching groups, now", f"{t['busiest_lag_before']:,}"],
        ["  after the switches", f"{t['busiest_lag_after']:,}"],
        ["review (no decision)", f"{a[R.REVIEW]:,}"],
    ]
    if review:
        summary_rows.append(["  why", review])
    order = {R.SWITCH: 0, R.REVIEW: 1, R.KEEP: 2}
    # switches first, by how much lag they take off the busiest member (messages, so that near-idle
    # groups do not rank first), then the groups left for review, then the kept ones
    cut = (rec.busiest_lag_current - rec.busiest_lag_recommended).astype("float64").fillna(-1.0)
    shown = (
        rec.assign(_o=rec.action.map(order), _g=cut)
        .sort_values(["_o", "_g", "moves", "cluster", "group_id"], ascending=[True, False, True, True, True])
        .head(RECOMMENDATION_ROWS)
    )
    base = docs_base()

    import pandas as pd

    def num(v: Any, fmt: str = "{:,.0f}") -> str:
        return "-" if pd.isna(v) else fmt.format(v)

    rows = [
        [
            r.cluster,
            r.group_id,
            f"{int(r.members):,}",
            f"{int(r.partitions):,}",
            r.current or "-",
            r.action,
            r.recommended if isinstance(r.recommended, str) else "-",
            num(r.busiest_lag_current),
            num(r.busiest_lag_recommended),
            num(r.lag_gain_pct, "{:.1f}%"),
            num(r.lag_vs_bound_current, "{:.2f}"),
            num(r.lag_vs_bound_recommended, "{:.2f}"),
            num(r.spread_current),
            num(r.spread_recommended),
            num(r.moves),
            "yes" if r.online is True else "-",
            r.how if isinstance(r.how, str) else "-",
            _steps_cell(r.steps if isinstance(r.steps, str) else None, base),
            r.reason,
        ]
        for r in shown.itertuples()
    ]
    parts = [
        "<h2 id='recommendations'>Recommendations</h2>",
        "<p>Per group: keep the current strategy or switch, to which strategy, and why "
        f'(<code>kassign.fleet.recommend</code>; docs/fleet.md, "Recommendations"). A group switches for '
        f"lag when its busiest member carries more than {R.LAG_TOLERANCE:.2f}x the lower bound and a measured "
        f"strategy cuts that lag by at least {100 * R.MIN_LAG_GAIN:.0f}% (groups whose busiest member has less "
        f"than {R.LAG_FLOOR:,} messages count as caught up; one within {R.LAG_TOLERANCE:.2f}x of the "
        "bound with the fewest partitions moved first, else the lowest lag); otherwise for the counts when "
        f"max - min is above {R.BALANCED_SPREAD} and a measured strategy balances them without raising the "
        "busiest member's lag (fewest moves first). failover groups keep it; consumer-protocol groups and "
        "groups whose current strategy was not measured are left for review. The consumer protocol is a "
        "candidate only where the group can move online, on the broker assignor it lands on. Every group: "
        "<code>recommendations.csv</code>.</p>",
        _html_table(["", "groups"], summary_rows),
        "<h3>Per group</h3>",
        _html_table(
            [
                "cluster",
                "group",
                "members",
                "partitions",
                "current",
                "action",
                "recommended",
                "busiest lag now",
                "busiest lag after",
                "lag cut",
                "lag/bound now",
                "lag/bound after",
                "max-min now",
                "max-min after",
                "partitions moved",
                "online",
                "how",
                "steps",
                "why",
            ],
            rows,
        ),
    ]
    if len(rec) > len(shown):
        parts.append(
            f"<p>First {len(shown):,} of {len(rec):,} groups shown (switches first, by the busiest member's lag "
            "they take off).</p>"
        )
    return parts, rec


def write_report(run: Any, out_dir: str, processes: int | None = None, metrics: str = "all") -> str:
    """Write ``report.html`` and its PNGs, ``recommendations.csv`` and the metrics for monitoring
    (:mod:`kassign.fleet.export`; ``metrics``: its scope, "all" or "plan") into ``out_dir``; return
    the HTML path. ``processes``: how many worker processes draw the figures
    (:class:`kassign.fleet.plots.Drawing`; default: by the results' size)."""
    df = run.results.to_pandas()
    from .plots import Drawing

    strategies = tuple(run.strategies)
    drawing = Drawing(df[df.status == "ok"], strategies, out_dir, processes)
    summary = summarize(run.results, strategies)
    migration_html, migration_fig = _migration_section(df, out_dir, strategies)
    recommendation_html, rec = _recommendation_section(df, strategies, out_dir)
    from . import export

    export.write(df, rec, out_dir, metrics)
    plots = drawing.result()
    if migration_fig is not None:
        plots.append(migration_fig)
    groups = df[["cluster", "group_id"]].drop_duplicates()
    first = df.drop_duplicates(["cluster", "group_id"])
    n_members = int(first.members.fillna(0).sum())
    errors = (
        df[df.status == "error"]
        .groupby(["cluster", "group_id", "error"], sort=True)["strategy"]
        .agg(lambda v: ", ".join(v))
        .reset_index()
    )
    cols = [c for c in SUMMARY_COLUMNS if not (c[0] == "churn_moves" and summary.churn_moves.isna().all())]
    summary_html = _html_table([h for _, h in cols], [[_fmt(c, r[c]) for c, _ in cols] for _, r in summary.iterrows()])
    err_rows = [[r.cluster, r.group_id, r.strategy, str(r.error)] for _, r in errors.head(50).iterrows()]
    switch = _switch_table(df, strategies)
    bound_table = _bound_table(df, strategies, out_dir)
    now = _dt.datetime.now().isoformat(timespec="seconds")
    plot_html = "".join(
        f'<figure><img src="{html.escape(f)}" alt="{html.escape(t)}"><figcaption><b>{html.escape(t)}.</b> '
        f"{html.escape(c)}</figcaption></figure>"
        for f, t, c in plots
    )
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<title>kassign fleet report</title><style>",
        CSS,
        "</style></head><body>",
        "<h1>kassign fleet report</h1>",
        f"<p>Snapshot <code>{html.escape(run.snapshot)}</code>: {len(groups):,} groups, {n_members:,} members. "
        f"Strategies: {html.escape(', '.join(strategies))}. Spark job {run.spark_seconds:.1f}s. "
        f"Generated {now}. Results: <code>results.parquet</code> (one row per group and strategy); "
        "per-group recommendations: <code>recommendations.csv</code>; metrics for monitoring: "
        "<code>kassign_fleet.prom</code> (Prometheus text format) and <code>kassign_fleet.json</code>. "
        f"Lags from committed and end offsets ({html.escape(run.lag_source)}).</p>",
        *recommendation_html,
        "<h2>Summary per strategy</h2>",
        summary_html,
        "<p>Shares are over groups that assigned without error. <i>lag max/mean</i> is the busiest member's "
        f"total lag over the mean member lag (groups with lag only); above {IMBALANCE_THRESHOLD:.2f} "
        "(Cruise Control's default) a group is flagged. <i>moves</i> counts partitions that leave their "
        "current owner. <i>unassigned</i> are partitions left for a follow-up round (cooperative-sticky "
        "withholds partitions that change owner). <i>busiest/bound</i> is the busiest member's lag over the "
        "lower bound max(largest partition lag, total lag / members) (1.0 = best possible); <i>lag worse "
        "than range</i> is the share of groups whose busiest member gets more lag than under range. "
        "<i>lag-aware</i> is the default mode (the proposal's text); <i>lag-aware:per-topic</i> the "
        "prototype's rule, <i>lag-aware:global</i> counts balanced overall, <i>lag-aware:sticky</i> keeps "
        "owned partitions.</p>",
        "<h2>Plots</h2>",
        plot_html,
    ]
    if bound_table:
        parts += [
            "<h2>Distance from the lower bound per group</h2>"
            "<p>Busiest member lag / lower bound for every strategy, the 20 groups farthest from the "
            "bound under the default lag-aware first. Every group: <code>lag_vs_bound.csv</code>.</p>",
            bound_table,
        ]
    parts += migration_html
    if switch:
        parts += [
            "<h2>Groups that gain most from switching</h2>"
            "<p>Largest reduction of the busiest member's lag from the group's current strategy "
            "(groups table) to the measured strategy with the lowest busiest-member lag.</p>",
            switch,
        ]
    parts += [f"<h2>Errors ({len(errors):,})</h2>"]
    if err_rows:
        parts.append(_html_table(["cluster", "group", "strategies", "error"], err_rows))
        if len(errors) > len(err_rows):
            parts.append(f"<p>First {len(err_rows)} shown; all are in results.parquet (status = 'error').</p>")
    else:
        parts.append("<p>None.</p>")
    parts.append(f"<script>{SORT_JS}</script></body></html>")
    path = os.path.join(out_dir, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path
