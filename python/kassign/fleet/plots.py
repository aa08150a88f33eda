"""The fleet report's figures (matplotlib, Agg): one function per PNG, each drawing from the
results of the groups that assigned without error and returning (file name, title, caption).

Importing this module imports matplotlib, numpy and pandas; :class:`Drawing` draws the figures in
worker processes forked from the driver, which has them imported already.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from ..quality import IMBALANCE_THRESHOLD

#: (file name, title, caption) of a written figure.
Figure = tuple[str, str, str]

#: Resolution of the report's PNGs.
DPI = 110


def save_figure(fig: Any, path: str) -> None:
    """Write ``fig`` as a PNG cropped to what is drawn (``bbox_inches="tight"``: one layout pass, where
    ``tight_layout`` before ``savefig`` drew the figure twice) and close it."""
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)


def ecdf(ax: Any, values: Any, **style: Any) -> None:
    """The cumulative share of ``values`` as a step line on ``ax`` (nothing when empty)."""
    v = np.sort(np.asarray(values))
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", **style)


def legend(ax: Any) -> None:
    """``ax``'s legend, when some line or bar has a label (matplotlib warns on an empty one)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


#: The strategies' colours, in the run's order: matplotlib's tab10, then eight more dark hues
#: (the job runs 13 labels by default; tab10 alone drew range and lag-aware:global alike).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#000080",
    "#b8860b",
    "#00ced1",
    "#ff1493",
    "#556b2f",
    "#8b0000",
    "#4b0082",
    "#000000",
)
#: ... and their markers (on the lines, and on top of the bars), one per colour.
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "x", "p", "d", "h", "H", "8", "1", "2")


def styles(strategies: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """(colour, marker) of each strategy label, by its place in ``strategies``: distinct for up to
    ``len(PALETTE)`` labels; beyond, colours from the turbo colour map and markers again."""
    from matplotlib.colors import to_hex

    out = {}
    for i, s in enumerate(strategies):
        colour = PALETTE[i] if i < len(PALETTE) else to_hex(plt.cm.turbo((i * 0.618034) % 1.0))
        out[s] = (colour, MARKERS[i % len(MARKERS)])
    return out


def _colors(strategies: tuple[str, ...]) -> dict[str, Any]:
    return {s: c for s, (c, _) in styles(strategies).items()}


def _line_style(strategies: tuple[str, ...], s: str) -> dict[str, Any]:
    """A strategy's line: its colour, and its marker every tenth of the line's length (shifted per
    strategy, so overlapping lines still show every marker)."""
    colour, marker = styles(strategies)[s]
    i = strategies.index(s)
    return {"color": colour, "marker": marker, "ms": 5, "markevery": ((0.013 * i) % 0.1, 0.1)}


def _edge(marker: str, colour: str) -> str:
    """A marker's edge colour on a bar of its own colour: black around a filled marker; an unfilled
    one (x, tri) is all edge, so it keeps the strategy's colour."""
    from matplotlib.lines import Line2D

    return "black" if marker in Line2D.filled_markers else colour


def _bar_markers(ax: Any, xs: Any, heights: Any, strategies: tuple[str, ...], labels: Any) -> None:
    """Each bar's strategy marker on its top."""
    st = styles(strategies)
    for x, h, s in zip(xs, heights, labels):
        colour, marker = st[s]
        ax.plot([x], [h], ls="none", marker=marker, color=colour, mec=_edge(marker, colour), mew=0.5, ms=6)


def _strategy_ticks(ax: Any) -> None:
    """Strategy names under bars, rotated and anchored at their tick (centred, neighbours overlap)."""
    ax.tick_params(axis="x", labelrotation=40)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")


def _plain_log(ax: Any, which: str) -> None:
    """A log scale on ``ax``'s ``which`` ("x" or "y") axis with plain-number labels on the decades and
    none on the minor ticks (the default labels are typeset as math text, the slowest part of
    drawing these figures)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def lag_balance(ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Lag balance: ECDF of max/mean member lag."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for s in strategies:
        ecdf(
            ax,
            ok[(ok.strategy == s) & ok.lag_ratio.notna()].lag_ratio.to_numpy(),
            label=s,
            **_line_style(strategies, s),
        )
    first = ok[ok.lag_ratio_bound.notna()].drop_duplicates(["cluster", "group_id"])
    ecdf(ax, first.lag_ratio_bound.to_numpy(), label="best possible", color="black", ls=":")
    ax.axvline(IMBALANCE_THRESHOLD, color="grey", ls="--", lw=1)
    _plain_log(ax, "x")
    ax.set_xlabel("max member lag / mean member lag (log)")
    ax.set_ylabel("share of groups")
    ax.set_title("Lag balance per group")
    legend(ax)
    ax.grid(alpha=0.3)
    save_figure(fig, os.path.join(out_dir, "lag_balance.png"))
    return (
        "lag_balance.png",
        "Lag balance",
        f"Cumulative share of groups by max/mean member lag (groups with lag). The dashed line is "
        f"the {IMBALANCE_THRESHOLD:.2f} imbalance threshold; further left is better. The dotted line is "
        f"the best any assignment could do (a hot partition cannot be split).",
    )


def lag_vs_bound(ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Distance from the lower bound: ECDF of busiest member lag / bound."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    vs_all = ok.lag_ratio / ok.lag_ratio_bound
    for s in strategies:
        ecdf(ax, vs_all[(ok.strategy == s) & vs_all.notna()].to_numpy(), label=s, **_line_style(strategies, s))
    ax.set_xlim(0.9, 3.0)  # groups beyond 3x (failover, by design) are off the right edge
    ax.set_xlabel("busiest member lag / lower bound (1 = best possible; cut at 3)")
    ax.set_ylabel("share of groups")
    ax.set_title("Distance from the lower bound per group")
    legend(ax)
    ax.grid(alpha=0.3)
    save_figure(fig, os.path.join(out_dir, "lag_vs_bound.png"))
    return (
        "lag_vs_bound.png",
        "Distance from the lower bound",
        "Cumulative share of groups by the busiest member's lag over the lower bound max(largest "
        "partition lag, total lag / members); 1.0 is the best any assignment could do (below 1: "
        "partitions withheld for a follow-up round). Every group's value per strategy is in "
        "lag_vs_bound.csv.",
    )


def count_spread(ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Count spread buckets."""
    buckets = [(0, 0, "0"), (1, 1, "1"), (2, 2, "2"), (3, 5, "3-5"), (6, 10, "6-10"), (11, 10**12, ">10")]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(len(strategies), 1)
    x = np.arange(len(buckets))
    for i, s in enumerate(strategies):
        v = ok[ok.strategy == s].count_spread.to_numpy()
        share = [((v >= lo) & (v <= hi)).mean() if len(v) else 0 for lo, hi, _ in buckets]
        colour, marker = styles(strategies)[s]
        ax.bar(x + i * width, share, width, color=colour)
        # the legend entry shows the bar's colour and its marker
        edge = _edge(marker, colour)
        ax.plot(x + i * width, share, ls="none", marker=marker, color=colour, mec=edge, mew=0.5, ms=5, label=s)
    ax.set_xticks(x + width * (len(strategies) - 1) / 2, [b[2] for b in buckets])
    ax.set_xlabel("max - min partitions per member")
    ax.set_ylabel("share of groups")
    ax.set_title("Partition-count balance")
    legend(ax)
    ax.grid(alpha=0.3, axis="y")
    save_figure(fig, os.path.join(out_dir, "count_spread.png"))
    return (
        "count_spread.png",
        "Partition-count balance",
        "Share of groups by the difference between the busiest and the idlest member.",
    )


def moves(ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Moves (and churn)."""
    colors = _colors(strategies)
    has_churn = ok.churn_moves.notna().any()
    fig, axes = plt.subplots(1, 2 if has_churn else 1, figsize=(10 if has_churn else 7, 4.5), squeeze=False)
    fig.subplots_adjust(wspace=0.3)
    ax = axes[0][0]
    pct = []
    for s in strategies:
        d = ok[ok.strategy == s]
        owned = (d.moves + d.kept).sum()
        pct.append(100 * d.moves.sum() / owned if owned else 0)
    ax.bar(strategies, pct, color=[colors[s] for s in strategies])
    _bar_markers(ax, range(len(strategies)), pct, strategies, strategies)
    ax.set_ylabel("% of previously owned partitions")
    ax.set_title("Moves vs the snapshot's owners")
    _strategy_ticks(ax)
    ax.grid(alpha=0.3, axis="y")
    if has_churn:
        ax2 = axes[0][1]
        tot = [ok[ok.strategy == s].churn_moves.sum() for s in strategies]
        ax2.bar(strategies, tot, color=[colors[s] for s in strategies])
        _bar_markers(ax2, range(len(strategies)), tot, strategies, strategies)
        rounds = int(ok.churn_rounds.max())
        ax2.set_title(f"Cumulative moves over {rounds} leave/join rounds")
        ax2.set_ylabel("partition moves (all groups)")
        _strategy_ticks(ax2)
        ax2.grid(alpha=0.3, axis="y")
    save_figure(fig, os.path.join(out_dir, "moves.png"))
    return (
        "moves.png",
        "Partition moves",
        "Share of partitions that leave their current owner if the group switched to the strategy now"
        + ("; right: cumulative moves in the churn replay." if has_churn else "."),
    )


def rack_locality(ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Rack locality."""
    colors = _colors(strategies)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    loc = []
    for s in strategies:
        d = ok[ok.strategy == s]
        e = d.rack_eligible.sum()
        loc.append(100 * d.rack_local.sum() / e if e else 0)
    ax.bar(strategies, loc, color=[colors[s] for s in strategies])
    _bar_markers(ax, range(len(strategies)), loc, strategies, strategies)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of partitions read from a same-rack replica")
    ax.set_title("Rack locality (members with client.rack)")
    _strategy_ticks(ax)
    ax.grid(alpha=0.3, axis="y")
    save_figure(fig, os.path.join(out_dir, "rack_locality.png"))
    return (
        "rack_locality.png",
        "Rack locality",
        "Among partitions assigned to members with a rack, the share with a replica on that rack.",
    )


def assign_time(ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Time per group vs size: median and p95 per size bin (a scatter of every group and strategy
    overplots into one colour at fleet scale)."""
    colors = _colors(strategies)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    sized = ok[ok.partitions > 0]
    top = max(float(sized.partitions.max()), 2.0) if len(sized) else 2.0
    edges = np.unique(np.round(np.logspace(0, np.log10(top) + 1e-9, 13)).astype(np.int64))
    for s in strategies:
        d = sized[sized.strategy == s]
        if d.empty:
            continue
        b = np.digitize(d.partitions.to_numpy(), edges)
        t = d.time_ms.clip(lower=1e-3).to_numpy()
        xs, med, p95 = [], [], []
        for k in np.unique(b):
            v = t[b == k]
            sizes = d.partitions.to_numpy()[b == k]
            xs.append(float(np.exp(np.log(sizes).mean())))
            med.append(float(np.median(v)))
            p95.append(float(np.quantile(v, 0.95)))
        colour, marker = styles(strategies)[s]
        ax.plot(xs, med, marker=marker, ms=4, label=s, color=colour)
        ax.plot(xs, p95, ls=":", lw=1, color=colors[s])
    _plain_log(ax, "x")
    _plain_log(ax, "y")
    ax.set_xlabel("partitions in the group (log)")
    ax.set_ylabel("kassign.assign time, ms (log)")
    ax.set_title("Assignment time per group (median, dotted: p95)")
    legend(ax)
    ax.grid(alpha=0.3)
    save_figure(fig, os.path.join(out_dir, "time.png"))
    return (
        "time.png",
        "Assignment time",
        "Wall time of kassign.assign per group (inside the Spark task, input conversion included): "
        "median (line) and 95th percentile (dotted) of the groups in each size bin.",
    )


#: The report's figures, in the report's order.
FIGURES: dict[str, Callable[[Any, tuple[str, ...], str], Figure]] = {
    "lag_balance": lag_balance,
    "lag_vs_bound": lag_vs_bound,
    "count_spread": count_spread,
    "moves": moves,
    "rack_locality": rack_locality,
    "assign_time": assign_time,
}

#: The results columns the figures read.
COLUMNS = (
    "cluster",
    "group_id",
    "strategy",
    "lag_ratio",
    "lag_ratio_bound",
    "count_spread",
    "moves",
    "kept",
    "churn_moves",
    "churn_rounds",
    "rack_eligible",
    "rack_local",
    "partitions",
    "time_ms",
)


def draw(name: str, ok: Any, strategies: tuple[str, ...], out_dir: str) -> Figure:
    """Draw one figure of :data:`FIGURES` (in a worker process, or here)."""
    return FIGURES[name](ok, strategies, out_dir)


#: Results rows up to which :class:`Drawing` draws the figures in worker processes by default (the
#: demo's 300 groups: 3,600 rows). Above it the drawing is a small share of the job's time and the
#: driver does it alone, holding no extra processes' memory.
PARALLEL_MAX_ROWS = 50_000


def _context() -> Any:
    """The worker processes' start method: forked from the driver, which has this module (matplotlib,
    numpy, pandas) imported already, so a worker starts drawing at once. Spark is done by then: the
    workers only draw and write their PNGs."""
    import multiprocessing

    return multiprocessing.get_context("fork")


class Drawing:
    """The report's figures (:data:`FIGURES`) being drawn: in up to ``processes`` worker processes
    (default: one per core, at most 4, when ``ok`` has at most :data:`PARALLEL_MAX_ROWS` rows; 0 or
    1: here, one after the other), while the caller goes on. :meth:`result` waits for them. The files
    and the returned captions are the same either way."""

    def __init__(self, ok: Any, strategies: tuple[str, ...], out_dir: str, processes: int | None = None) -> None:
        self.args = (ok, strategies, out_dir)
        if processes is None:
            processes = min(len(FIGURES), os.cpu_count() or 1, 4) if len(ok) <= PARALLEL_MAX_ROWS else 1
        self.pool: Any = None
        self.futures: list[Any] = []
        if processes > 1:
            from concurrent.futures import ProcessPoolExecutor

            try:
                self.pool = ProcessPoolExecutor(processes, mp_context=_context())
            except (ValueError, OSError):  # no fork on this platform, or no processes to spare
                self.pool = None
        if self.pool is not None:
            data = ok[[c for c in COLUMNS if c in ok.columns]]
            self.futures = [self.pool.submit(draw, name, data, strategies, out_dir) for name in FIGURES]

    def result(self) -> list[Figure]:
        """(file name, title, caption) of each figure, in :data:`FIGURES`' order."""
        if self.pool is None:
            return [draw(name, *self.args) for name in FIGURES]
        from concurrent.futures.process import BrokenProcessPool

        try:
            return [f.result() for f in self.futures]
        except BrokenProcessPool:  # a worker died (killed, out of memory): draw them here instead
            return [draw(name, *self.args) for name in FIGURES]
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
