"""The fleet report's per-group recommendation: keep the current strategy or switch, to which
strategy, and why (docs/fleet.md, "Recommendations").

Pure pandas over the job's result table (one row per group and strategy); nothing is recomputed.
The decision rule, for each group:

1. **review** (no decision) when the group is on the consumer protocol already (the broker
   assigns), when its current strategy is unknown or was not among the strategies run, or when the
   current strategy's row is an error.
2. **keep** when the current strategy is ``failover``: its priority order is the group's intent,
   which no balancing strategy keeps.
3. The **candidates** are the other strategies whose row is ``ok``, complete (nothing left
   unassigned, no invalid placement) and not ``failover``; ``server-uniform`` / ``server-range``
   only as the assignor the group lands on when it moves to the consumer protocol
   (:mod:`kassign.fleet.migration`), and only when that move can be done online.
4. **Lag**: when the current strategy's busiest member carries more than :data:`LAG_TOLERANCE`
   times the lower bound (``lag_vs_bound``) and at least :data:`LAG_FLOOR` messages, switch to a
   candidate that cuts the busiest member's lag by at least :data:`MIN_LAG_GAIN`: among those, the
   ones within the tolerance of the bound first, by fewest partitions moved; if none is, the one
   with the least busiest-member lag. No such candidate: keep.
5. **Count**: otherwise, when the current max - min partitions per member is above
   :data:`BALANCED_SPREAD`, switch to a candidate with a spread of at most that whose busiest-member
   lag is no higher than the current one's (fewest moves first). None: keep.
6. Otherwise **keep**: the busiest member is within the tolerance of the bound (or the group has no
   lag, or is caught up) and the counts are balanced.

Ties go to fewer partitions moved, then the smaller spread, then the strategies' order in the run.
Every switch names how it is done online: one rolling bounce (the same protocol name, another
configuration), two rolling bounces (docs/upgrade.md), or a rolling bounce to the consumer protocol
(docs/fleet.md, "Moving to the consumer protocol").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..quality import IMBALANCE_THRESHOLD
from .group import strategy_call
from .migration import lands_on

#: A busiest member within this factor of the lower bound counts as at the bound (the same 1.10 as
#: the report's imbalance flag: Cruise Control's default balance threshold).
LAG_TOLERANCE = IMBALANCE_THRESHOLD
#: A switch for lag must cut the busiest member's lag by at least this share.
MIN_LAG_GAIN = 0.10
#: A busiest member with less lag than this (messages) counts as caught up: the lag rule does not
#: apply (a rolling upgrade for a few messages is not worth it); the count rule still does.
LAG_FLOOR = 1_000
#: max - min partitions per member that counts as balanced.
BALANCED_SPREAD = 1
#: Strategies never recommended: failover concentrates a topic on one member by design.
NOT_RECOMMENDED = frozenset({"failover"})
#: Strategies with the cooperative rebalance protocol (every other classic one is eager).
COOPERATIVE = frozenset({"cooperative-sticky"})

KEEP, SWITCH, REVIEW = "keep", "switch", "review"
ACTIONS = (KEEP, SWITCH, REVIEW)

#: The upgrade procedures a switch can need: (document, heading). The report links them; the tests
#: check every heading exists in the document.
UPGRADE_DOC = "upgrade.md"
FLEET_DOC = "fleet.md"
STEPS = {
    "one-bounce": (UPGRADE_DOC, "Same protocol name, another library: one bounce"),
    "pick": (UPGRADE_DOC, "How the broker picks the assignor"),
    "to-cooperative": (UPGRADE_DOC, "Eager -> cooperative: two bounces (KIP-429)"),
    "to-eager": (UPGRADE_DOC, "Cooperative -> eager: two bounces back"),
    "to-consumer": (FLEET_DOC, "Moving to the consumer protocol (KIP-848)"),
}

#: Columns of :func:`recommendations`' table (recommendations.csv), in order.
COLUMNS = (
    "cluster",
    "group_id",
    "members",
    "partitions",
    "current",
    "action",
    "recommended",
    "reason",
    "busiest_lag_current",
    "busiest_lag_recommended",
    "lag_gain_pct",
    "lag_vs_bound_current",
    "lag_vs_bound_recommended",
    "spread_current",
    "spread_recommended",
    "moves",
    "moved_pct",
    "online",
    "how",
    "steps",
)


def anchor(heading: str) -> str:
    """The anchor MkDocs gives a heading (Python-Markdown's toc ``slugify``: word characters,
    spaces and hyphens kept, lower case, runs of spaces and hyphens made one hyphen)."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def step_ref(key: str) -> str:
    """``docs/<file>#<anchor>`` of a :data:`STEPS` entry."""
    doc, heading = STEPS[key]
    return f"docs/{doc}#{anchor(heading)}"


def protocol_name(label: str) -> str:
    """The classic protocol name a fleet label runs under (lag-aware's modes are one protocol)."""
    return strategy_call(label)[0]


def configured(label: str) -> str:
    """A fleet label as the assignor and options a consumer configures, e.g. ``lag-aware:global`` ->
    ``lag-aware(mode='global')``."""
    name, options = strategy_call(label)
    if not options:
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in sorted(options.items()))})"


def switch_method(current: str, target: str) -> tuple[bool, str, list[str]]:
    """(online, how, step keys of :data:`STEPS`) of a switch of a classic group from ``current`` to
    ``target`` (both fleet labels; ``server-*``: a move to the consumer protocol, which
    :func:`recommendations` only proposes when it can be done online)."""
    if target.startswith("server-"):
        assignor = target.removeprefix("server-")
        return (
            True,
            f"rolling bounce with group.protocol=consumer (the broker assigns with {assignor})",
            ["to-consumer"],
        )
    old, new = protocol_name(current), protocol_name(target)
    cfg_old, cfg_new = configured(current), configured(target)
    if old == new:
        return True, f"one rolling bounce: same protocol {new!r}, configured as {cfg_new}", ["one-bounce"]
    if new in COOPERATIVE and old not in COOPERATIVE:
        return True, f"two rolling bounces: [{cfg_new}, {cfg_old}], then [{cfg_new}]", ["to-cooperative"]
    if old in COOPERATIVE and new not in COOPERATIVE:
        return True, f"two rolling bounces: [{cfg_old}, {cfg_new}], then [{cfg_new}]", ["to-eager"]
    return True, f"two rolling bounces: [{cfg_new}, {cfg_old}], then [{cfg_new}]", ["pick"]


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _int(v: Any) -> int | None:
    return None if _num(v) is None else int(v)


def _lag(r: dict[str, Any]) -> float:
    """A row's busiest-member lag (unknown: infinite, so it never counts as lower)."""
    v = _num(r.get("max_member_lag"))
    return math.inf if v is None else v


def _row(action: str, reason: str, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(action=action, reason=reason, **kw)
    return row


def _fmt_ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def decide(
    current: str | None,
    group_protocol: str | None,
    custom_user_data: int,
    members: int,
    rows: dict[str, dict[str, Any]],
    order: Sequence[str],
) -> dict[str, Any]:
    """The decision for one group (the module's rule): ``rows`` maps a strategy label to its result
    row (a dict with status, max_member_lag, lag_vs_bound, count_spread, moves, kept, unassigned,
    violations). Returns the :data:`COLUMNS` fields but the group's identity."""
    cur_label = current or ""
    if group_protocol == "consumer":
        return _row(REVIEW, "already on the consumer protocol: the broker assigns", current=cur_label)
    if not current:
        return _row(REVIEW, "current strategy unknown (no groups-table protocol)", current=cur_label)
    cur = rows.get(current)
    if cur is None:
        return _row(REVIEW, f"current strategy {current!r} was not among the strategies run", current=cur_label)
    if cur.get("status") != "ok":
        return _row(
            REVIEW, f"the current strategy failed on this group: {cur.get('error') or 'error'}", current=cur_label
        )
    cur_lag = _num(cur.get("max_member_lag"))
    cur_vs = _num(cur.get("lag_vs_bound"))
    cur_spread = int(cur.get("count_spread") or 0)
    base = dict(
        current=current,
        busiest_lag_current=_int(cur.get("max_member_lag")),
        lag_vs_bound_current=cur_vs,
        spread_current=cur_spread,
    )

    def keep(reason: str) -> dict[str, Any]:
        return _row(
            KEEP,
            reason,
            recommended=current,
            busiest_lag_recommended=base["busiest_lag_current"],
            lag_vs_bound_recommended=cur_vs,
            spread_recommended=cur_spread,
            moves=0,
            moved_pct=0.0,
            lag_gain_pct=0.0 if cur_lag is not None else None,
            **base,
        )

    if current in NOT_RECOMMENDED:
        return keep(f"{current}: its priority order is the group's intent; no balancing strategy keeps it")
    online_move = members > 0 and not custom_user_data
    landing = f"server-{lands_on(current)}"
    rank = {s: i for i, s in enumerate(order)}
    candidates = []
    for s in order:
        r = rows.get(s)
        if s == current or r is None or s in NOT_RECOMMENDED or r.get("status") != "ok":
            continue
        if (r.get("unassigned") or 0) > 0 or (r.get("violations") or 0) > 0:
            continue
        if s.startswith("server-") and (s != landing or not online_move):
            continue
        candidates.append((s, r))

    def moves_of(r: dict[str, Any]) -> int:
        return int(r.get("moves") or 0)

    def switch(s: str, r: dict[str, Any], reason: str) -> dict[str, Any]:
        lag = _num(r.get("max_member_lag"))
        owned = moves_of(r) + int(r.get("kept") or 0)
        online, how, steps = switch_method(current, s)
        return _row(
            SWITCH,
            reason,
            recommended=s,
            busiest_lag_recommended=_int(r.get("max_member_lag")),
            lag_vs_bound_recommended=_num(r.get("lag_vs_bound")),
            spread_recommended=int(r.get("count_spread") or 0),
            lag_gain_pct=(100.0 * (1 - lag / cur_lag)) if cur_lag and lag is not None else None,
            moves=moves_of(r),
            moved_pct=100.0 * moves_of(r) / owned if owned else 0.0,
            online=online,
            how=how,
            steps=" ".join(step_ref(k) for k in steps),
            **base,
        )

    if cur_vs is not None and cur_lag is not None and cur_vs > LAG_TOLERANCE and cur_lag >= LAG_FLOOR:
        limit = cur_lag * (1 - MIN_LAG_GAIN)
        better = [(s, r) for s, r in candidates if _lag(r) <= limit]
        at_bound = [(s, r) for s, r in better if (_num(r.get("lag_vs_bound")) or math.inf) <= LAG_TOLERANCE]
        if at_bound:
            s, r = min(at_bound, key=lambda sr: (moves_of(sr[1]), int(sr[1].get("count_spread") or 0), rank[sr[0]]))
        elif better:
            s, r = min(
                better,
                key=lambda sr: (
                    _lag(sr[1]),
                    int(sr[1].get("count_spread") or 0),
                    moves_of(sr[1]),
                    rank[sr[0]],
                ),
            )
        else:
            return keep(
                f"busiest member at {_fmt_ratio(cur_vs)} the lag bound, but no measured strategy cuts its lag "
                f"by {100 * MIN_LAG_GAIN:.0f}%"
            )
        vs = _num(r.get("lag_vs_bound"))
        return switch(
            s,
            r,
            f"lag: busiest member at {_fmt_ratio(cur_vs)} the bound under {current}, {_fmt_ratio(vs)} under {s}",
        )
    if cur_spread > BALANCED_SPREAD:
        fits = [
            (s, r)
            for s, r in candidates
            if int(r.get("count_spread") or 0) <= BALANCED_SPREAD and (cur_lag is None or _lag(r) <= cur_lag)
        ]
        if fits:
            s, r = min(fits, key=lambda sr: (moves_of(sr[1]), int(sr[1].get("count_spread") or 0), rank[sr[0]]))
            return switch(
                s,
                r,
                f"count: max-min {cur_spread} partitions per member under {current}, "
                f"{int(r.get('count_spread') or 0)} under {s}, busiest member's lag no higher",
            )
        return keep(
            f"max-min {cur_spread} partitions per member, but no measured strategy balances the counts "
            f"without raising the busiest member's lag"
        )
    if cur_vs is None:
        return keep(f"no lag, and max-min {cur_spread} partitions per member")
    if cur_lag is not None and cur_lag < LAG_FLOOR:
        return keep(f"caught up (busiest member's lag {cur_lag:,.0f} < {LAG_FLOOR:,}), max-min {cur_spread}")
    return keep(f"busiest member at {_fmt_ratio(cur_vs)} the lag bound, max-min {cur_spread}")


#: The result columns :func:`recommendations` reads.
INPUT_COLUMNS = (
    "cluster",
    "group_id",
    "strategy",
    "status",
    "error",
    "current_protocol",
    "group_protocol",
    "custom_user_data",
    "members",
    "partitions",
    "max_member_lag",
    "lag_vs_bound",
    "count_spread",
    "moves",
    "kept",
    "unassigned",
    "violations",
)


#: Integer columns of :data:`COLUMNS` (nullable).
INTEGER_COLUMNS = (
    "members",
    "partitions",
    "busiest_lag_current",
    "busiest_lag_recommended",
    "spread_current",
    "spread_recommended",
    "moves",
)


def recommendations(df: Any, strategies: Sequence[str]) -> Any:
    """One row per group (a pandas DataFrame with :data:`COLUMNS`, sorted by cluster and group) from
    the results table as a pandas DataFrame; ``strategies``: the run's labels, in its order."""
    import pandas as pd

    if df.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    cols = {n: df[n].tolist() for n in INPUT_COLUMNS if n in df.columns}
    n = len(df)
    groups: dict[tuple[Any, Any], dict[str, dict[str, Any]]] = {}
    first: dict[tuple[Any, Any], int] = {}
    for i in range(n):
        key = (cols["cluster"][i], cols["group_id"][i])
        if pd.isna(key[0]) or pd.isna(key[1]):
            continue
        first.setdefault(key, i)
        groups.setdefault(key, {})[cols["strategy"][i]] = {k: v[i] for k, v in cols.items()}
    out = []
    for key in sorted(groups):
        f = first[key]

        def text(name: str, f: int = f) -> str | None:
            v = cols[name][f] if name in cols else None
            return v if isinstance(v, str) and v else None

        members = _num(cols["members"][f]) or 0
        partitions = _num(cols["partitions"][f]) or 0
        ud = _num(cols["custom_user_data"][f]) if "custom_user_data" in cols else None
        row = decide(
            text("current_protocol"), text("group_protocol"), int(ud or 0), int(members), groups[key], strategies
        )
        row.update(cluster=key[0], group_id=key[1], members=int(members), partitions=int(partitions))
        out.append(row)
    table = pd.DataFrame(out, columns=list(COLUMNS))
    # counts stay integers where a value is missing (pandas' nullable Int64), ratios 4 decimals
    for c in INTEGER_COLUMNS:
        table[c] = table[c].astype("Int64")
    for c in ("lag_gain_pct", "lag_vs_bound_current", "lag_vs_bound_recommended", "moved_pct"):
        table[c] = table[c].astype("float64").round(4)
    return table


def summary(rec: Any) -> dict[str, Any]:
    """Fleet-level figures of the plan (:func:`recommendations`' table)."""
    sw = rec[rec.action == SWITCH]
    lag_before = sw.busiest_lag_current.dropna()
    lag_after = sw.busiest_lag_recommended[lag_before.index].dropna()
    return {
        "groups": len(rec),
        "actions": {a: int((rec.action == a).sum()) for a in ACTIONS},
        "switch_to": {str(k): int(v) for k, v in sw.recommended.value_counts().sort_index().items()},
        "switch_from": {str(k): int(v) for k, v in sw.current.value_counts().sort_index().items()},
        "for_lag": int(sw.reason.str.startswith("lag:").sum()),
        "for_count": int(sw.reason.str.startswith("count:").sum()),
        "online": int((sw.online == True).sum()),  # noqa: E712 (object column: True, False or None)
        "to_consumer_protocol": int(sw.recommended.str.startswith("server-").sum()),
        "moves": int(sw.moves.sum()) if len(sw) else 0,
        "busiest_lag_before": int(lag_before.sum()) if len(lag_before) else 0,
        "busiest_lag_after": int(lag_after.sum()) if len(lag_after) else 0,
        "review_reasons": {str(k): int(v) for k, v in rec[rec.action == REVIEW].reason.value_counts().items()},
    }


def console_lines(rec: Any) -> list[str]:
    """The plan in two lines for the console."""
    s = summary(rec)
    a = s["actions"]
    to = ", ".join(f"{k}: {v}" for k, v in sorted(s["switch_to"].items(), key=lambda kv: -kv[1])) or "none"
    return [
        f"recommendations: keep {a[KEEP]}, switch {a[SWITCH]} ({s['for_lag']} for lag, {s['for_count']} for "
        f"counts; {s['online']} online), review {a[REVIEW]} of {s['groups']} groups",
        f"  switch to: {to}; {s['moves']:,} partitions move at the switches; busiest members' lag "
        f"{s['busiest_lag_before']:,} -> {s['busiest_lag_after']:,} (sum over the switching groups)",
    ]
