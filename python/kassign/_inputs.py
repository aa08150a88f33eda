"""The checks of every input the Python front reads, in one place and run once per call.

``kassign.assign``, ``kassign.assign_owners``, ``kassign.protocol.assign_wire`` and the fleet's
Python strategies call :func:`check_inputs` (or the function of the one input they take) before
any strategy runs; the strategies read what it returns and check nothing again. What is checked
here: the members mapping (for the strategies written in Python; the Rust core reads it itself),
the replica racks, the lags and each strategy's options. Counts, the partition cap, duplicates and
owned partitions are the Rust core's (``rust/core/src/model.rs``; ``kassign.Member`` checks a member's
shape when it is built).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ._types import Member

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

#: The largest lag accepted: Kafka offsets are int64, so no real lag is larger. The strategies'
#: kernels sum lags exactly in 128 bits.
MAX_LAG = 2**63 - 1

Racks = list[tuple[str, int, list[str]]]
Lags = dict[tuple[str, int], int] | None


def check_members(members: Any) -> dict[str, Member]:
    """The members mapping as a dict, for the Python strategies (the Rust strategies read the
    mapping in the core)."""
    if not isinstance(members, Mapping):
        raise TypeError(f"members: expected a mapping of member id to Member, got {type(members).__name__}")
    out: dict[str, Member] = {}
    for member_id, member in members.items():
        if not isinstance(member_id, str):
            raise TypeError(f"members: member ids must be str, got {member_id!r}")
        if not isinstance(member, Member):
            raise TypeError(f"members[{member_id!r}]: expected a kassign.Member, got {type(member).__name__}")
        out[member_id] = member
    return out


def check_partition_racks(partition_racks: Any) -> Racks:
    """``partition_racks`` as the core reads it: (topic, partition, racks) triples."""
    if partition_racks is None:
        return []
    if not isinstance(partition_racks, Mapping):
        raise TypeError(
            f"partition_racks: expected a mapping of (topic, partition) to racks, got {type(partition_racks).__name__}"
        )
    out = []
    for key, racks in partition_racks.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)):
            raise TypeError(f"partition_racks: keys must be (topic, partition) pairs, got {key!r}")
        if isinstance(racks, (str, bytes)):
            raise TypeError(f"partition_racks[{key!r}]: expected an iterable of rack names, not a single str")
        rack_list = list(racks)
        for r in rack_list:
            if not isinstance(r, str):
                raise TypeError(f"partition_racks[{key!r}]: rack names must be str, got {r!r}")
        if not _INT64_MIN <= key[1] <= _INT64_MAX:
            raise ValueError(f"partition_racks: partition index {key[1]} of topic {key[0]!r} is out of range")
        out.append((key[0], key[1], rack_list))
    return out


def check_lags(lags: Any, name: str = "lags") -> Lags:
    """``lags`` as a dict of (topic, partition) -> int lag from 0 to :data:`MAX_LAG` (or None);
    errors name the argument ``name``."""
    if lags is None:
        return None
    if not isinstance(lags, Mapping):
        raise TypeError(f"{name}: expected a mapping of (topic, partition) to lag, got {type(lags).__name__}")
    out: dict[tuple[str, int], int] = {}
    for key, lag in lags.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)):
            raise TypeError(f"{name}: keys must be (topic, partition) pairs, got {key!r}")
        if not isinstance(lag, int) or isinstance(lag, bool):
            raise TypeError(f"{name}[{key!r}]: expected an int, got {type(lag).__name__}")
        if lag < 0:
            raise ValueError(f"{name}[{key!r}]: lag must be >= 0, got {lag}")
        if lag > MAX_LAG:
            raise ValueError(f"{name}[{key!r}]: lag must be <= 2**63 - 1 (Kafka offsets are int64), got {lag}")
        out[(key[0], key[1])] = lag
    return out


# -- options ---------------------------------------------------------------------------------------

LAG_AWARE = "lag-aware"
#: ``lag-aware``'s modes, its default mode and default ``min_gain`` (kassign.assignors.lag_aware).
LAG_AWARE_MODES = ("proposal", "per-topic", "global")
LAG_AWARE_DEFAULT_MODE = "proposal"
LAG_AWARE_DEFAULT_MIN_GAIN = 0.05
_LAG_AWARE_OPTIONS = ("mode", "max_skew", "lag_provider", "improve", "sticky", "min_gain")


@dataclass(frozen=True)
class LagAwareOptions:
    """``lag-aware``'s options, checked and with their defaults (:func:`lag_aware_options`)."""

    mode: str
    max_skew: int
    improve: bool
    sticky: bool
    min_gain: float
    lag_provider: Any


def lag_aware_options(options: Mapping[str, Any]) -> LagAwareOptions:
    """Check ``lag-aware``'s options (unknown names: TypeError; bad values: ValueError)."""
    unknown = sorted(set(options) - set(_LAG_AWARE_OPTIONS))
    if unknown:
        raise TypeError(
            f"assign: strategy {LAG_AWARE!r} got unknown options {', '.join(unknown)}; "
            f"it accepts {', '.join(_LAG_AWARE_OPTIONS)}"
        )
    mode = options.get("mode", LAG_AWARE_DEFAULT_MODE)
    if not isinstance(mode, str) or mode not in LAG_AWARE_MODES:
        raise ValueError(f"mode: expected one of {', '.join(repr(m) for m in LAG_AWARE_MODES)}, got {mode!r}")
    max_skew = options.get("max_skew", 0)
    if not isinstance(max_skew, int) or isinstance(max_skew, bool):
        raise ValueError(f"max_skew: expected a non-negative int, got {max_skew!r}")
    if max_skew < 0:
        raise ValueError(f"max_skew: expected a non-negative int, got {max_skew}")
    improve = options.get("improve", mode != "per-topic")
    if not isinstance(improve, bool):
        raise ValueError(f"improve: expected True or False, got {improve!r}")
    sticky = options.get("sticky", False)
    if not isinstance(sticky, bool):
        raise ValueError(f"sticky: expected True or False, got {sticky!r}")
    if sticky and mode == "global":
        raise ValueError(
            "sticky: sticky=True keeps the per-topic count rule and works with mode 'proposal' or "
            "'per-topic', not 'global'"
        )
    if "min_gain" in options:
        min_gain = options["min_gain"]
        if not sticky:
            raise ValueError("min_gain: only applies with sticky=True")
        if isinstance(min_gain, bool) or not isinstance(min_gain, (int, float)) or not 0 <= min_gain <= 1:
            raise ValueError(f"min_gain: expected a number between 0 and 1, got {min_gain!r}")
        min_gain = float(min_gain)
    else:
        min_gain = LAG_AWARE_DEFAULT_MIN_GAIN
    provider = options.get("lag_provider")
    if provider is not None and not callable(getattr(provider, "lags", None)):
        raise ValueError(f"lag_provider: expected an object with a lags(partitions) method, got {provider!r}")
    return LagAwareOptions(mode, max_skew, improve, sticky, min_gain, provider)


def check_options(caller: str, strategy: str, written_in_python: bool, options: Mapping[str, Any]) -> Any:
    """A strategy's options, checked: ``lag-aware``'s as :class:`LagAwareOptions`; every other
    strategy takes none (None; any option raises TypeError, which names ``caller`` for the Rust
    strategies and ``assign`` for ``fair`` and ``failover``, as it always has)."""
    if strategy == LAG_AWARE:
        return lag_aware_options(options)
    if options:
        where = "assign" if written_in_python else caller
        raise TypeError(f"{where}: strategy {strategy!r} takes no options, got {', '.join(sorted(options))}")
    return None


class CheckedInputs(NamedTuple):
    """What :func:`check_inputs` returns: the racks as the core reads them, the lags, and the
    strategy's checked options (:func:`check_options`)."""

    racks: Racks
    lags: Lags
    options: Any


def check_inputs(
    caller: str, strategy: str, written_in_python: bool, partition_racks: Any, lags: Any, options: Mapping[str, Any]
) -> CheckedInputs:
    """The checks every entry point shares, run once: the replica racks, the lags and the
    strategy's options (``lag-aware``: also that ``lags`` and ``lag_provider`` are not both given)."""
    racks = check_partition_racks(partition_racks)
    checked_lags = check_lags(lags)
    checked = check_options(caller, strategy, written_in_python, options)
    if isinstance(checked, LagAwareOptions) and checked.lag_provider is not None and checked_lags is not None:
        raise ValueError("lag-aware: pass lags or lag_provider, not both")
    return CheckedInputs(racks, checked_lags, checked)
