"""kassign.fleet.migration.migration_view (plain column lists) against the implementation it replaced
(pandas rows; kept here as the reference) on random results tables: nulls, errors, duplicate rows,
every protocol and status, missing strategies."""

from __future__ import annotations

import random
from typing import Any

import pandas as pd
import pytest

from kassign.fleet.migration import VIEW_COLUMNS, lands_on, migration_view, semantics_lost


def reference_migration_view(df: Any) -> Any:
    """The view as kassign.fleet.migration computed it before (pandas rows, iterrows): the reference."""
    import numpy as np
    import pandas as pd

    if df.empty:
        return pd.DataFrame(columns=list(VIEW_COLUMNS))
    by = {}
    for (c, g, s), r in df.set_index(["cluster", "group_id", "strategy"]).iterrows():
        by[(c, g, s)] = r
    rows = []
    for (c, g), d in df.groupby(["cluster", "group_id"], sort=True):
        first = d.iloc[0]
        proto = first.current_protocol if isinstance(first.current_protocol, str) else ""
        gp = first.group_protocol if isinstance(first.group_protocol, str) else None
        ud = int(first.custom_user_data) if pd.notna(first.custom_user_data) else 0
        target = lands_on(proto)
        before: Any = by.get((c, g, proto))
        after: Any = by.get((c, g, f"server-{target}"))
        sticky: Any = by.get((c, g, "sticky"))
        plugin: Any = by.get((c, g, "server-kassign"))

        def ok(r: Any) -> bool:
            return r is not None and r.status == "ok"

        if gp == "consumer":
            status, online, reason = "already consumer", None, "the group already uses the consumer protocol"
        elif not first.members:
            status, online, reason = "no members", True, "no members: nothing to convert"
        elif ud:
            status, online = "blocked", False
            reason = (
                f"custom user data in {ud} member(s)' current assignment: the broker refuses the online "
                f'upgrade ("userData from a custom assignor would be lost")'
            )
        else:
            status, online, reason = "online", True, ""
        owned = float(after.moves + after.kept) if ok(after) else np.nan
        rows.append(
            {
                "cluster": c,
                "group_id": g,
                "current": proto,
                "group_protocol": gp,
                "members": int(first.members) if pd.notna(first.members) else 0,
                "partitions": int(after.partitions)
                if ok(after)
                else (int(first.partitions) if pd.notna(first.partitions) else 0),
                "status": status,
                "online": online,
                "reason": reason,
                "lands_on": target if gp != "consumer" else "",
                "moves": int(after.moves) if ok(after) else np.nan,
                "owned": owned,
                "moved_pct": (after.moves / owned if owned else 0.0) if ok(after) else np.nan,
                "sticky_moves": int(sticky.moves) if ok(sticky) else np.nan,
                "spread_before": before.count_spread if ok(before) else np.nan,
                "spread_after": after.count_spread if ok(after) else np.nan,
                "busiest_lag_before": before.max_member_lag if ok(before) else np.nan,
                "busiest_lag_after": after.max_member_lag if ok(after) else np.nan,
                "lag_ratio_before": before.lag_ratio if ok(before) else np.nan,
                "lag_ratio_after": after.lag_ratio if ok(after) else np.nan,
                "semantics_lost": semantics_lost(proto) if gp != "consumer" else "",
                "kassign_moves": int(plugin.moves) if ok(plugin) else np.nan,
                "kassign_spread": plugin.count_spread if ok(plugin) else np.nan,
                "rack_locality_after": float(after.rack_locality)
                if ok(after) and pd.notna(after.rack_locality)
                else np.nan,
                "kassign_rack_locality": float(plugin.rack_locality)
                if ok(plugin) and pd.notna(plugin.rack_locality)
                else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(VIEW_COLUMNS))


STRATEGIES = [
    "range",
    "sticky",
    "cooperative-sticky",
    "lag-aware",
    "fair",
    "server-uniform",
    "server-range",
    "server-kassign",
]


def random_results(rng: random.Random) -> pd.DataFrame:
    rows = []
    for c in rng.sample(["c1", "c2", "c3"], rng.randint(1, 3)):
        for g in range(rng.randint(1, 12)):
            gid = f"g{g}" if rng.random() > 0.03 else None
            proto = rng.choice(["range", "sticky", "roundrobin", "lag-aware", "failover", "stream", "", None])
            gp = rng.choice(["classic", "classic", "consumer", None, ""])
            ud = rng.choice([0, 0, 0, 2, None])
            members = rng.choice([0, 3, 17, None])
            partitions = rng.choice([0, 6, 40, None])
            for s in rng.sample(STRATEGIES, rng.randint(0, len(STRATEGIES))) * (2 if rng.random() < 0.1 else 1):
                ok = rng.random() < 0.85
                rows.append(
                    {
                        "cluster": c if rng.random() > 0.02 else None,
                        "group_id": gid,
                        "strategy": s,
                        "status": "ok" if ok else "error",
                        "current_protocol": proto,
                        "group_protocol": gp,
                        "custom_user_data": ud,
                        "members": members,
                        "partitions": rng.choice([partitions or 0, rng.randint(0, 50)]) if ok else partitions,
                        "moves": rng.randint(0, 40) if ok else None,
                        "kept": rng.randint(0, 40) if ok else None,
                        "count_spread": rng.randint(0, 5) if ok else None,
                        "max_member_lag": rng.choice([rng.randint(0, 10**9), None]) if ok else None,
                        "lag_ratio": rng.choice([rng.random() * 3, None]) if ok else None,
                        "rack_locality": rng.choice([rng.random(), None]) if ok else None,
                    }
                )
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for name in ("custom_user_data", "members", "partitions", "moves", "kept", "count_spread", "max_member_lag"):
        df[name] = df[name].astype("float64")  # nullable ints, as pyarrow's to_pandas gives them
    return df


@pytest.mark.parametrize("seed", range(150))
def test_migration_view_equals_the_reference(seed: int) -> None:
    df = random_results(random.Random(seed))
    new, old = migration_view(df), reference_migration_view(df)
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    assert list(new.columns) == list(VIEW_COLUMNS)


def test_empty_results() -> None:
    df = pd.DataFrame(columns=["cluster", "group_id", "strategy"])
    pd.testing.assert_frame_equal(migration_view(df), reference_migration_view(df))
