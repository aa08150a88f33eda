"""Typed stub of the Rust extension ``kassign._core``. The public API is in ``kassign``."""

from typing import Protocol, Sequence, TypeVar

_TP = TypeVar("_TP")

__version__: str

class ProtocolError(ValueError):
    """Kafka consumer-protocol bytes (another member's metadata) could not be decoded."""

class InternalError(RuntimeError):
    """The Rust core hit an internal error (a bug). The process keeps running."""

class _MemberColumns(Protocol):
    ids: list[str]
    subs: list[int]
    subscriptions: list[list[str]]
    owned: list[Sequence[tuple[str, int]] | None]
    generations: list[int]
    racks: list[str | None]
    instance_ids: list[str | None]

def assign(
    strategy: str,
    topics: list[tuple[str, int]],
    members: _MemberColumns,
    partition_racks: list[tuple[str, int, list[str]]],
    tp_class: type[_TP],
) -> list[list[_TP]]:
    """Run a Rust strategy; returns one sorted list per member, aligned with ``members.ids``."""

def rust_strategies() -> list[str]:
    """Names of the strategies computed by the Rust core."""

def _trigger_panic() -> None:
    """Panic inside the core on purpose (tests: panics surface as InternalError)."""
