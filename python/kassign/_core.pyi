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

def result_lists(
    tp_class: type[_TP], n_members: int, topics: list[str], owners: list[list[int]]
) -> list[list[_TP]]:
    """Per-member lists from per-topic owner arrays (owner index per partition, -1 = none)."""

def rust_strategies() -> list[str]:
    """Names of the strategies computed by the Rust core."""

def _trigger_panic() -> None:
    """Panic inside the core on purpose (tests: panics surface as InternalError)."""

# --- kassign.protocol (rust/src/python_protocol.rs); the public, typed API is kassign.protocol.
# Grouped partitions cross the boundary as (topic, [partition, ...]).

_BytesLike = bytes | bytearray | memoryview
_Groups = list[tuple[str, list[int]]]

def encode_subscription(
    topics: list[str],
    user_data: _BytesLike | None,
    owned_partitions: list[tuple[str, int]],
    generation: int,
    rack: str | None,
    version: int,
) -> bytes:
    """Encode a ConsumerProtocolSubscription v0-v3 (topics and owned partitions sorted)."""

def decode_subscription(data: _BytesLike) -> tuple[int, list[str], bytes | None, _Groups, int, str | None]:
    """Decode a subscription into (version, topics, user_data, owned groups, generation, rack)."""

def encode_assignment(partitions: list[tuple[str, int]], user_data: _BytesLike | None, version: int) -> bytes:
    """Encode a ConsumerProtocolAssignment v0-v3 (grouped by topic in order of first appearance)."""

def decode_assignment(data: _BytesLike) -> tuple[int, _Groups, bytes | None]:
    """Decode an assignment into (version, groups, user_data)."""

def encode_sticky_user_data(partitions: list[tuple[str, int]], generation: int | None) -> bytes:
    """Encode StickyAssignorUserData: v1 with a generation, v0 without."""

def decode_sticky_user_data(data: _BytesLike) -> tuple[_Groups, int | None]:
    """Decode StickyAssignorUserData (v1, else v0) into (groups, generation)."""

def encode_int32_user_data(value: int) -> bytes:
    """Four big-endian bytes of a signed int32."""

def decode_generation(data: _BytesLike) -> int:
    """Cooperative-sticky generation from the first four bytes; ProtocolError if shorter."""

def decode_priority(data: _BytesLike) -> int | None:
    """Failover priority from exactly four bytes; None for any other length."""
