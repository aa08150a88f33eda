"""Typed stub of the Rust extension ``kassign._core``. The public API is in ``kassign``."""

from typing import Any, Callable, TypeVar

_TP = TypeVar("_TP")

__version__: str

class ProtocolError(ValueError):
    """Kafka consumer-protocol bytes (another member's metadata) could not be decoded."""

class InternalError(RuntimeError):
    """The Rust core hit an internal error (a bug). The process keeps running."""

def assign(
    strategy: str,
    topics: list[tuple[str, int]],
    members: list[tuple[str, list[str], list[tuple[str, int]], int, str | None, str | None]],
    partition_racks: list[tuple[str, int, list[str]]],
    tp_class: Callable[[str, int], _TP],
) -> dict[str, list[_TP]]:
    """Run a Rust strategy. Members are (id, topics, owned, generation, rack, group_instance_id)."""

def rust_strategies() -> list[str]:
    """Names of the strategies computed by the Rust core."""

def _trigger_panic() -> None:
    """Panic inside the core on purpose (tests: panics surface as InternalError)."""
