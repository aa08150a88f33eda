"""Every strategy's options are checked in one place (``kassign._inputs``); the errors a caller
sees are the same type and the same message on every entry point: ``kassign.assign``,
``kassign.assign_owners``, ``kassign.protocol.assign_wire`` and (lag-aware)
``kassign.assign_lag_aware``; the fleet's Python strategies are checked once per label."""

from __future__ import annotations

import re
from typing import Any

import pytest

import kassign
from kassign import Member, protocol

MEMBERS = {"a": Member(["t"]), "b": Member(["t"])}
WIRE = {m: protocol.encode_subscription(["t"]) for m in MEMBERS}


class NoLags:
    pass


class Provider:
    def lags(self, partitions: Any) -> dict[tuple[str, int], int]:
        return {}


LAG_AWARE_BAD = [
    ({"mode": "bogus"}, ValueError, "mode: expected one of 'proposal', 'per-topic', 'global', got 'bogus'"),
    ({"mode": None}, ValueError, "mode: expected one of 'proposal', 'per-topic', 'global', got None"),
    ({"max_skew": -1}, ValueError, "max_skew: expected a non-negative int, got -1"),
    ({"max_skew": 1.5}, ValueError, "max_skew: expected a non-negative int, got 1.5"),
    ({"max_skew": True}, ValueError, "max_skew: expected a non-negative int, got True"),
    ({"improve": 1}, ValueError, "improve: expected True or False, got 1"),
    ({"sticky": "yes"}, ValueError, "sticky: expected True or False, got 'yes'"),
    (
        {"sticky": True, "mode": "global"},
        ValueError,
        "sticky: sticky=True keeps the per-topic count rule and works with mode 'proposal' or 'per-topic', "
        "not 'global'",
    ),
    ({"min_gain": 0.1}, ValueError, "min_gain: only applies with sticky=True"),
    ({"sticky": True, "min_gain": 1.5}, ValueError, "min_gain: expected a number between 0 and 1, got 1.5"),
    ({"sticky": True, "min_gain": True}, ValueError, "min_gain: expected a number between 0 and 1, got True"),
    ({"lag_provider": NoLags()}, ValueError, "lag_provider: expected an object with a lags(partitions) method"),
    (
        {"colour": "red", "size": 1},
        TypeError,
        "assign: strategy 'lag-aware' got unknown options colour, size; "
        "it accepts mode, max_skew, lag_provider, improve, sticky, min_gain",
    ),
]

NO_OPTIONS_BAD = [
    ("fair", "assign"),
    ("failover", "assign"),
    ("range", None),
    ("cooperative-sticky", None),
]


def _raises(exc: type[Exception], message: str) -> Any:
    """The error, with a message that starts with ``message`` (the rest is a repr)."""
    return pytest.raises(exc, match="^" + re.escape(message))


@pytest.mark.parametrize("options, exc, message", LAG_AWARE_BAD)
def test_lag_aware_bad_options(options: dict[str, Any], exc: type[Exception], message: str) -> None:
    with _raises(exc, message):
        kassign.assign("lag-aware", MEMBERS, {"t": 2}, **options)
    with _raises(exc, message):
        kassign.assign_owners("lag-aware", MEMBERS, {"t": 2}, **options)
    with _raises(exc, message):
        protocol.assign_wire("lag-aware", WIRE, {"t": 2}, **options)
    with _raises(exc, message):
        kassign.assign_lag_aware(MEMBERS, {"t": 2}, **options)


def test_lags_and_a_provider_are_exclusive() -> None:
    message = "lag-aware: pass lags or lag_provider, not both"
    lags = {("t", 0): 1}
    with _raises(ValueError, message):
        kassign.assign("lag-aware", MEMBERS, {"t": 2}, lags=lags, lag_provider=Provider())
    with _raises(ValueError, message):
        kassign.assign_owners("lag-aware", MEMBERS, {"t": 2}, lags=lags, lag_provider=Provider())
    with _raises(ValueError, message):
        kassign.assign_lag_aware(MEMBERS, {"t": 2}, lags=lags, lag_provider=Provider())


@pytest.mark.parametrize("strategy, prefix", NO_OPTIONS_BAD)
def test_strategies_without_options(strategy: str, prefix: str | None) -> None:
    for caller, call in [
        ("assign", lambda: kassign.assign(strategy, MEMBERS, {"t": 2}, mode="x", b=1)),
        ("assign_owners", lambda: kassign.assign_owners(strategy, MEMBERS, {"t": 2}, mode="x", b=1)),
        ("assign_wire", lambda: protocol.assign_wire(strategy, WIRE, {"t": 2}, mode="x", b=1)),
    ]:
        with _raises(TypeError, f"{prefix or caller}: strategy {strategy!r} takes no options, got b, mode"):
            call()


def test_good_options_pass() -> None:
    assert kassign.assign("lag-aware", MEMBERS, {"t": 2}, mode="global", max_skew=10**30, improve=False)
    assert kassign.assign("lag-aware", MEMBERS, {"t": 2}, sticky=True, min_gain=0, lag_provider=Provider())
