"""The "moving to the consumer protocol" view of the fleet report (KIP-848).

For every group of the results table (one row per group and strategy, from the fleet job), this
answers what happens if the group moves from the classic protocol to the consumer protocol, where
the broker assigns with its ``uniform`` or ``range`` assignor (kassign's ``server-uniform`` /
``server-range`` strategies, docs/server_assignors.md):

* **online migration possible?** Apache Kafka 4.4.0 converts a classic group online when a member
  rejoins with ``group.protocol=consumer``, unless a member's current assignment carries user data
  (``ConsumerGroup.fromClassicGroup`` throws "userData from a custom assignor would be lost"; the
  coordinator's ``ConsumerProtocolMigrationTest`` covers the refusal). The snapshot's
  ``assignment_user_data`` column gives that.
* **which broker assignor:** classic ``range`` maps to ``range``; ``sticky``,
  ``cooperative-sticky`` and ``roundrobin`` to ``uniform``; anything else lands on ``uniform`` (the
  broker's default ``group.remote.assignor``).
* **at the switch:** the broker computes a target assignment from the members' current assignment;
  partitions moved, balance (max - min partitions per member) and lag (busiest member's lag,
  max/mean member lag) before and after. *Before* is the group's current strategy as kassign
  computes it on the snapshot (its row of the results table); *after* is the ``server-*`` row.
* **with kassign's broker plugin instead** (assignor ``kassign``, strategy ``server-kassign``,
  docs/broker.md): its moves, balance and rack locality at the same switch, beside the built-in
  assignor's (``kassign_moves``, ``kassign_spread``, ``kassign_rack_locality`` against ``moves``,
  ``spread_after``, ``rack_locality_after``).
* **semantics lost:** lag-awareness (``lag-aware``), failover priority (``failover``), fair's
  ordering (``fair``), a custom assignor's logic, round-robin placement (``roundrobin``).

Pure pandas: no Spark here; the report and the tests call it on the results table.
"""

from __future__ import annotations

import os
from typing import Any

#: Classic assignor name -> the broker assignor the group lands on.
BROKER_ASSIGNOR = {"range": "range", "roundrobin": "uniform", "sticky": "uniform", "cooperative-sticky": "uniform"}
#: The broker's default (``group.remote.assignor`` unset).
DEFAULT_BROKER_ASSIGNOR = "uniform"
#: Classic strategy -> what the broker assignor does not do.
SEMANTICS_LOST = {
    "lag-aware": "lag-awareness",
    "failover": "failover priority",
    "fair": "fair's ordering",
    "roundrobin": "round-robin placement",
}

#: Columns of the per-group view, in order.
VIEW_COLUMNS = (
    "cluster",
    "group_id",
    "current",
    "group_protocol",
    "members",
    "partitions",
    "status",
    "online",
    "reason",
    "lands_on",
    "moves",
    "owned",
    "moved_pct",
    "sticky_moves",
    "spread_before",
    "spread_after",
    "busiest_lag_before",
    "busiest_lag_after",
    "lag_ratio_before",
    "lag_ratio_after",
    "semantics_lost",
    "kassign_moves",
    "kassign_spread",
    "rack_locality_after",
    "kassign_rack_locality",
)


def lands_on(protocol: str | None) -> str:
    return BROKER_ASSIGNOR.get(protocol or "", DEFAULT_BROKER_ASSIGNOR)


def semantics_lost(protocol: str | None) -> str:
    if not protocol or protocol in ("range", "sticky", "cooperative-sticky"):
        return ""
    return SEMANTICS_LOST.get(protocol, f"custom assignor {protocol!r}")


def migration_view(df: Any) -> Any:
    """One row per group (pandas DataFrame with :data:`VIEW_COLUMNS`), from the results table as a
    pandas DataFrame. ``status`` is one of "already consumer", "online", "blocked", "no members"."""
    import numpy as np
    import pandas as pd

    if df.empty:
        return pd.DataFrame(columns=list(VIEW_COLUMNS))
    # Plain column lists (no pandas row objects: a fleet has hundreds of thousands of rows).
    names = (
        "cluster",
        "group_id",
        "strategy",
        "status",
        "current_protocol",
        "group_protocol",
        "custom_user_data",
        "members",
        "partitions",
        "moves",
        "kept",
        "count_spread",
        "max_member_lag",
        "lag_ratio",
    )
    col = {n: df[n].tolist() for n in names}
    # Rack locality (results tables written before it existed have no such column).
    col["rack_locality"] = df["rack_locality"].tolist() if "rack_locality" in df else [None] * len(df)
    cluster, group_id, strategy, status = col["cluster"], col["group_id"], col["strategy"], col["status"]
    # (cluster, group, strategy) -> row (the last one, as a dict would keep); each group's first row
    # in table order, groups with a null key left out (as pandas' groupby does).
    by = {k: i for i, k in enumerate(zip(cluster, group_id, strategy))}
    first_of: dict[tuple[Any, Any], int] = {}
    for i, key in enumerate(zip(cluster, group_id)):
        if key not in first_of and not (pd.isna(key[0]) or pd.isna(key[1])):
            first_of[key] = i

    def ok(r: int | None) -> bool:
        return r is not None and status[r] == "ok"

    def val(name: str, r: int | None) -> Any:
        return col[name][r] if r is not None else None

    rows = []
    for c, g in sorted(first_of):
        f = first_of[(c, g)]
        proto = col["current_protocol"][f] if isinstance(col["current_protocol"][f], str) else ""
        gp = col["group_protocol"][f] if isinstance(col["group_protocol"][f], str) else None
        ud = int(col["custom_user_data"][f]) if pd.notna(col["custom_user_data"][f]) else 0
        f_members, f_partitions = col["members"][f], col["partitions"][f]
        target = lands_on(proto)
        before = by.get((c, g, proto))
        after = by.get((c, g, f"server-{target}"))
        sticky = by.get((c, g, "sticky"))
        plugin = by.get((c, g, "server-kassign"))
        if gp == "consumer":
            status_, online, reason = "already consumer", None, "the group already uses the consumer protocol"
        elif not f_members:
            status_, online, reason = "no members", True, "no members: nothing to convert"
        elif ud:
            status_, online = "blocked", False
            reason = (
                f"custom user data in {ud} member(s)' current assignment: the broker refuses the online "
                f'upgrade ("userData from a custom assignor would be lost")'
            )
        else:
            status_, online, reason = "online", True, ""
        a_ok, b_ok = ok(after), ok(before)
        a_moves = val("moves", after)
        owned = float(a_moves + val("kept", after)) if a_ok else np.nan
        rows.append(
            {
                "cluster": c,
                "group_id": g,
                "current": proto,
                "group_protocol": gp,
                "members": int(f_members) if pd.notna(f_members) else 0,
                "partitions": int(val("partitions", after))
                if a_ok
                else (int(f_partitions) if pd.notna(f_partitions) else 0),
                "status": status_,
                "online": online,
                "reason": reason,
                "lands_on": target if gp != "consumer" else "",
                "moves": int(a_moves) if a_ok else np.nan,
                "owned": owned,
                "moved_pct": (a_moves / owned if owned else 0.0) if a_ok else np.nan,
                "sticky_moves": int(val("moves", sticky)) if ok(sticky) else np.nan,
                "spread_before": val("count_spread", before) if b_ok else np.nan,
                "spread_after": val("count_spread", after) if a_ok else np.nan,
                "busiest_lag_before": val("max_member_lag", before) if b_ok else np.nan,
                "busiest_lag_after": val("max_member_lag", after) if a_ok else np.nan,
                "lag_ratio_before": val("lag_ratio", before) if b_ok else np.nan,
                "lag_ratio_after": val("lag_ratio", after) if a_ok else np.nan,
                "semantics_lost": semantics_lost(proto) if gp != "consumer" else "",
                "kassign_moves": int(val("moves", plugin)) if ok(plugin) else np.nan,
                "kassign_spread": val("count_spread", plugin) if ok(plugin) else np.nan,
                "rack_locality_after": _float(val("rack_locality", after)) if a_ok else np.nan,
                "kassign_rack_locality": _float(val("rack_locality", plugin)) if ok(plugin) else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(VIEW_COLUMNS))


def _float(x: Any) -> float:
    """A rack locality as a float (None, no rack data, as NaN)."""
    return float("nan") if x is None else float(x)


def totals(view: Any) -> dict[str, Any]:
    """Fleet-wide figures of the view."""
    classic = view[view.status != "already consumer"]
    movable = classic[classic.status == "online"]
    m = movable[movable.moves.notna()]
    owned = m.owned.sum()
    worse_spread = m[(m.spread_after > m.spread_before)]
    hotter = m[(m.busiest_lag_after > m.busiest_lag_before)]
    lost = classic[classic.semantics_lost != ""]
    return {
        "groups": len(view),
        "already_consumer": int((view.status == "already consumer").sum()),
        "online": int((classic.status == "online").sum()),
        "blocked": int((classic.status == "blocked").sum()),
        "no_members": int((classic.status == "no members").sum()),
        "lands_on_uniform": int((movable.lands_on == "uniform").sum()),
        "lands_on_range": int((movable.lands_on == "range").sum()),
        "moves": int(m.moves.sum()),
        "owned": int(owned),
        "moved_pct": float(m.moves.sum() / owned) if owned else 0.0,
        "sticky_moves": int(m.sticky_moves.sum()) if m.sticky_moves.notna().any() else None,
        "balance_worse": len(worse_spread),
        "busiest_lag_higher": len(hotter),
        "semantics_lost": {k: int(v) for k, v in lost.semantics_lost.value_counts().items()},
    }


def plot(view: Any, out_dir: str, strategies: tuple[str, ...] = ()) -> tuple[str, str, str] | None:
    """migration.png: groups by outcome, and the share of partitions moved at the switch. The lines
    of ``server-uniform`` and ``server-range`` take their colour and marker among ``strategies`` (the
    run's labels, as in the report's other figures) when they are there."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import ecdf, legend, save_figure, styles

    if view.empty:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    fig.subplots_adjust(wspace=0.3)
    labels = ["online -> uniform", "online -> range", "blocked (user data)", "already consumer", "no members"]
    counts = [
        int(((view.status == "online") & (view.lands_on == "uniform")).sum()),
        int(((view.status == "online") & (view.lands_on == "range")).sum()),
        int((view.status == "blocked").sum()),
        int((view.status == "already consumer").sum()),
        int((view.status == "no members").sum()),
    ]
    ax1.barh(labels[::-1], counts[::-1], color=["#999", "#6a9", "#d62728", "#ff7f0e", "#1f77b4"])
    ax1.set_xlabel("groups")
    ax1.set_title("Moving to the consumer protocol")
    ax1.grid(alpha=0.3, axis="x")
    m = view[(view.status == "online") & view.moved_pct.notna()]
    run_styles = styles(strategies)
    for target, color, marker in (("uniform", "#1f77b4", "o"), ("range", "#ff7f0e", "s")):
        label = f"server-{target}"
        color, marker = run_styles.get(label, (color, marker))
        ecdf(
            ax2,
            100 * m[m.lands_on == target].moved_pct.to_numpy(),
            label=label,
            color=color,
            marker=marker,
            ms=5,
            markevery=0.1,
        )
    ax2.set_xlabel("% of the group's owned partitions moved at the switch")
    ax2.set_ylabel("share of groups")
    ax2.set_title("Partitions moved by the broker's first assignment")
    legend(ax2)  # none when no online group has owned partitions
    ax2.grid(alpha=0.3)
    save_figure(fig, os.path.join(out_dir, "migration.png"))
    return (
        "migration.png",
        "Moving to the consumer protocol",
        "Left: groups by outcome of an online move to the KIP-848 consumer protocol. Right: cumulative share "
        "of movable groups by the share of their partitions the broker's first target assignment moves.",
    )


def console_lines(view: Any) -> list[str]:
    t = totals(view)
    lost = ", ".join(f"{k}: {v}" for k, v in sorted(t["semantics_lost"].items())) or "none"
    return [
        f"moving to the consumer protocol (KIP-848): {t['online']} of {t['groups']} groups can move online "
        f"({t['lands_on_uniform']} -> uniform, {t['lands_on_range']} -> range), {t['blocked']} blocked by custom "
        f"assignment user data, {t['already_consumer']} already on it",
        f"  at the switch: {t['moves']:,} partitions move ({100 * t['moved_pct']:.1f}% of owned); balance worse "
        f"in {t['balance_worse']} groups, busiest member's lag higher in {t['busiest_lag_higher']}; "
        f"semantics lost: {lost}",
    ]
