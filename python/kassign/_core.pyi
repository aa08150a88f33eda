"""Typed stub of the Rust extension ``kassign._core``. The public API is in ``kassign``."""

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar, final

from ._types import TopicPartition

_TP = TypeVar("_TP")

__version__: str

class KassignError(Exception):
    """The base class of every error the kassign core raises."""

class InputError(KassignError, ValueError):
    """Raised when the core rejects an input: partition counts, the partition or member cap, a
    duplicate member or topic, an unknown strategy. A ValueError."""

class ProtocolError(KassignError, ValueError):
    """Raised when Kafka consumer-protocol bytes (another member's metadata) cannot be decoded.
    A ValueError."""

class EncodeError(KassignError, ValueError):
    """Raised when a value cannot be written in the consumer protocol's wire formats (a string
    over 32767 bytes, ...). A ValueError."""

class InternalError(KassignError, RuntimeError):
    """Raised when the Rust core hits an internal error (a bug); the process keeps running. A
    RuntimeError."""

MAX_PARTITIONS: int
MAX_MEMBERS: int

@final
class Member:
    """One consumer group member as the assignor sees it (see ``kassign.Member``)."""

    def __new__(
        cls,
        topics: Iterable[str],
        owned_partitions: Iterable[Any] | None = (),
        generation: int | None = -1,
        rack: str | None = None,
        group_instance_id: str | None = None,
        user_data: bytes | bytearray | memoryview | None = None,
    ) -> Member: ...
    @property
    def topics(self) -> tuple[str, ...]: ...
    @property
    def owned_partitions(self) -> tuple[TopicPartition, ...]: ...
    @property
    def owned_groups(self) -> list[tuple[str, list[int]]]: ...
    @property
    def generation(self) -> int: ...
    @property
    def rack(self) -> str | None: ...
    @property
    def group_instance_id(self) -> str | None: ...
    @property
    def user_data(self) -> bytes | None: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def assign(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: list[tuple[str, int, list[str]]] | None,
    tp_class: type[_TP],
) -> dict[str, list[_TP]]:
    """Run a Rust strategy; {member id: sorted partitions} in the members' order."""

def assign_owners(
    strategy: str,
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: list[tuple[str, int, list[str]]] | None,
) -> tuple[list[str], dict[str, bytes]]:
    """Run a Rust strategy; (member ids in order, {topic: native int32 owner positions, -1 = none})."""

def check_partitions(partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    """The model's checks of partition counts (types, >= 0, int32, the total cap); a new dict."""

def result_lists(
    tp_class: type[_TP], n_members: int, topics: list[str], owners: Sequence[Sequence[int]]
) -> list[list[_TP]]:
    """Per-member lists from per-topic owner arrays (owner index per partition, -1 = none)."""

def sticky_inputs(
    members: Mapping[str, Member], partitions_per_topic: Mapping[str, int]
) -> tuple[dict[str, tuple[int, ...]], dict[str, dict[int, list[int]]]]:
    """One read of the group for the sticky Python strategies: (topic -> subscriber indices, as
    ``subscribers_by_topic``; the claim rule: topic -> {index in sorted(members): [previously owned
    partition]})."""

def previous_owners(members: Mapping[str, Member]) -> dict[tuple[str, int], str]:
    """The claim rule: {(topic, partition): previous owner's id}, every claimed key."""

def next_offset(committed: int | None, begin: int | None, end: int | None, auto_offset_reset: str) -> int:
    """The lag rule (rust/core/src/lag.rs): the offset a group consumes next on a partition."""

def compute_lag(committed: int | None, begin: int | None, end: int | None, auto_offset_reset: str) -> int:
    """The lag rule (rust/core/src/lag.rs): max(end - next, 0), exact."""

def rust_strategies() -> list[str]:
    """Names of the strategies computed by the Rust core."""

def _trigger_panic() -> None:
    """Panic inside the core on purpose (tests: panics surface as InternalError)."""

# --- kassign.protocol (rust/python/src/protocol.rs); the public, typed API is kassign.protocol.

_BytesLike = bytes | bytearray | memoryview

def encode_subscription(
    topics: list[str],
    user_data: _BytesLike | None,
    owned_partitions: list[tuple[str, int]],
    generation: int,
    rack: str | None,
    version: int,
) -> bytes:
    """Encode a ConsumerProtocolSubscription v0-v3 (topics and owned partitions sorted)."""

def decode_subscription(
    data: _BytesLike,
) -> tuple[int, tuple[str, ...], bytes | None, tuple[TopicPartition, ...], int, str | None]:
    """Decode a subscription into (version, topics, user_data, owned partitions, generation, rack)."""

def encode_assignment(partitions: list[tuple[str, int]], user_data: _BytesLike | None, version: int) -> bytes:
    """Encode a ConsumerProtocolAssignment v0-v3 (grouped by topic in order of first appearance)."""

def decode_assignment(data: _BytesLike) -> tuple[int, tuple[TopicPartition, ...], bytes | None]:
    """Decode an assignment into (version, partitions, user_data)."""

def encode_sticky_user_data(partitions: list[tuple[str, int]], generation: int | None) -> bytes:
    """Encode StickyAssignorUserData: v1 with a generation, v0 without."""

def decode_sticky_user_data(data: _BytesLike) -> tuple[list[TopicPartition], int | None]:
    """Decode StickyAssignorUserData (v1, else v0) into (partitions, generation)."""

def encode_int32_user_data(value: int) -> bytes:
    """Four big-endian bytes of a signed int32."""

def decode_generation(data: _BytesLike) -> int:
    """Cooperative-sticky generation from the first four bytes; ProtocolError if shorter."""

def decode_priority(data: _BytesLike) -> int | None:
    """Failover priority from exactly four bytes; None for any other length."""

def assign_wire(
    strategy: str,
    subscriptions: Mapping[str, _BytesLike],
    partitions_per_topic: Mapping[str, int],
    group_instance_ids: Mapping[str, str | None] | None,
    partition_racks: list[tuple[str, int, list[str]]] | None,
) -> tuple[dict[str, bytes], list[str]]:
    """Decode, assign (a Rust strategy), encode: ({member id: assignment bytes}, warnings)."""

def members_from_wire(
    strategy: str,
    subscriptions: Mapping[str, _BytesLike],
    group_instance_ids: Mapping[str, str | None] | None,
) -> tuple[dict[str, Member], list[str]]:
    """The leader's members from subscription bytes: ({member id: Member}, warnings)."""

def encode_assignments(result: Mapping[str, list[TopicPartition]]) -> dict[str, bytes]:
    """ConsumerProtocolAssignment v3 bytes per member (grouped, sorted, null user data)."""

# -- the drop-in classes' leader step (rust/python/src/drop_in.rs) -----------------------------------

def drop_in_assign(
    strategy: str,
    protocol_name: str,
    client: str,
    members: Any,
    metadata: Callable[[list[str], bool], tuple[Mapping[str, int], list[tuple[str, int, list[str]]] | None]],
    warn: Callable[[str], object],
) -> dict[str, bytes]:
    """Read the client's decoded members (history by ``protocol_name``'s rule), assign with a Rust
    strategy, encode: {member id: assignment bytes}. ``metadata(topics, any_rack)`` gives the counts
    and racks; ``warn`` gets each member's warning as it is read."""

def drop_in_members(protocol_name: str, client: str, members: Any, warn: Callable[[str], object]) -> dict[str, Member]:
    """The client's decoded members as ``Member``s (history by ``protocol_name``'s rule)."""

# -- the fleet job's per-group evaluation (rust/python/src/fleet.rs) ---------------------------------

class EvalSettings(TypedDict):
    """The settings of a group's evaluation (kassign.fleet.evaluate builds them once per job)."""

    churn_rounds: int
    churn_seed: int
    with_assignment: bool
    auto_offset_reset: str
    python_strategies: Mapping[str, tuple[Callable[..., Any], bool]]
    member_class: type
    inputs_class: type

def fleet_evaluate(
    cluster: str, group_id: str, members: Any, parts: Any, strategies: list[str], settings: EvalSettings
) -> Any: ...

@final
class StreamIndex:
    """The stream plan's partitions file (and committed offsets file), read once per task
    (rust/python/src/fleet_stream.rs)."""

    def __new__(cls, parts: Any, offsets: Any | None = None) -> StreamIndex: ...
    def __len__(self) -> int: ...

def fleet_evaluate_stream(
    cluster: str, group_id: str, group: Any, index: StreamIndex, strategies: list[str], settings: EvalSettings
) -> Any: ...
def fleet_result_schema(with_assignment: bool) -> Any:
    """The pyarrow schema of fleet_evaluate's result table (rust/python/src/fleet_arrow_out.rs)."""

# -- the fleet's churn replay (rust/python/src/churn.rs) ---------------------------------------------

def churn_events(member_ids: list[str], rounds: int, seed: int) -> list[tuple[str, str, str | None]]:
    """The churn replay's events for a group (member ids in row order, unique): ``("leave", id,
    None)`` or ``("join", id, like_id)``; seeded SplitMix64 draws (docs/fleet.md, Churn replay)."""

# -- placement loops of the Python strategies fair and lag-aware (rust/python/src/greedy.rs) ---------

#: A column of ints, one per partition: ``array('i')`` or ``array('q')`` (read through its
#: bytes), or any other sequence of ints.
_Ints = Sequence[int]

def greedy_deal(
    n_members: int,
    eligible: list[tuple[int, ...]],
    sizes: list[int],
    lags: Sequence[_Ints | None] | None = None,
    skew: int = 0,
) -> list[array[int]]:
    """``kassign.assignors._greedy.deal_global``'s placement: the owners of each topic
    (``array('i')``), in the given topic order."""

def greedy_carry_lag(
    topics: Sequence[tuple[tuple[int, ...], int, _Ints | None, _Ints | None]], load: list[int], skew: int = 0
) -> tuple[list[array[int]], list[int]]:
    """``kassign.assignors.lag_aware._carry_lag``'s placement: (owners per topic as ``array('i')``,
    loads; exact 128-bit sums of int64 lags); LookupError when a fixed owner is not a subscriber."""

def greedy_per_topic(
    topics: Sequence[tuple[tuple[int, ...], int, _Ints | None, _Ints | None]], n_members: int, skew: int = 0
) -> list[array[int]]:
    """``kassign.assignors.lag_aware._per_topic``'s placement (owners per topic, ``array('i')``);
    LookupError when a fixed owner is not a subscriber."""

def greedy_keep(
    topics: Sequence[tuple[tuple[int, ...], int, _Ints | None, dict[int, list[int]]]], n_members: int
) -> tuple[list[array[int]], list[bytes], int, list[int]]:
    """Sticky ``lag-aware``'s keep step: (owners per topic, ``array('i')``, -1 = free; kept flags
    per topic, one byte per partition, 1 = kept; partitions kept; each member's lag from its kept
    partitions)."""

def subscribers_by_topic(
    topics_of: list[Sequence[str]], partitions_per_topic: dict[str, int]
) -> dict[str, tuple[int, ...]]:
    """``kassign.assignors._greedy.subscribers_by_topic``: topic -> subscriber indices, equal sets
    sharing one tuple."""

def greedy_loads(n_members: int, owners: Sequence[_Ints], arrays: Sequence[_Ints | None]) -> list[int]:
    """Each member's total lag under a placement (exact sums); ValueError for an owner out of range."""

def failover_winners(user_data: list[bytes | None], eligible: list[tuple[int, ...]]) -> list[int]:
    """``failover``'s winner of each eligible set: the highest priority (``decode_priority``; none
    ranks lowest), ties the smallest index."""

def lag_improve(
    subs: list[tuple[int, ...]],
    owners: Sequence[_Ints],
    arrays: Sequence[_Ints | None],
    fill_order: list[int],
    load: list[int],
    overall: bool,
    stop: int,
    phases: list[tuple[float, list[bytes | Sequence[bool] | None] | None]],
    limits: tuple[int, int, int, int, int, float, int],
) -> tuple[list[int], list[array[int]], list[int]]:
    """``kassign.assignors.lag_aware``'s improvement pass by topic index: (moves per phase, owners
    as ``array('i')``, loads, exact: int64 lags, 128-bit sums); ValueError when the inputs do not
    describe a placement."""

def lag_summary(arrays: Sequence[_Ints]) -> list[tuple[int, int]]:
    """Each lag column's (largest lag, exact total); ValueError for a negative lag."""

def owner_positions(owners: Sequence[_Ints], position: list[int]) -> list[array[int]]:
    """Owner arrays renumbered (``o`` -> ``position[o]``, -1 kept); ValueError for an owner out of
    range."""

# kassign.quality's metrics (rust/core/src/fleet/metrics.rs; python/kassign/quality.py documents them)
IMBALANCE_THRESHOLD: float

def quality_counts(assignment: Mapping[str, Sequence[tuple[str, int]]]) -> list[int]: ...
def quality_count_spread(assignment: Mapping[str, Sequence[tuple[str, int]]]) -> int: ...
def quality_ratio(max_value: float, mean_value: float) -> float | None: ...
def quality_member_lags(
    assignment: Mapping[str, Sequence[tuple[str, int]]], lags: Mapping[tuple[str, int], int] | None = None
) -> list[int]: ...
def quality_lag_ratio_bound(
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    lags: Mapping[tuple[str, int], int] | None = None,
) -> float | None: ...
def quality_assignable_partitions(members: Mapping[str, Member], partitions_per_topic: Mapping[str, int]) -> int: ...
def quality_moves(
    previous: Mapping[tuple[str, int], str],
    assignment: Mapping[str, Sequence[tuple[str, int]]],
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
) -> tuple[int, int]: ...
def quality_rack_locality(
    assignment: Mapping[str, Sequence[tuple[str, int]]],
    members: Mapping[str, Member],
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
) -> tuple[int, int]: ...
def quality_violations(
    assignment: Mapping[str, Sequence[tuple[str, int]]],
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
) -> int: ...
def quality_evaluate(
    members: Mapping[str, Member],
    partitions_per_topic: Mapping[str, int],
    assignment: Mapping[str, Sequence[tuple[str, int]]],
    lags: Mapping[tuple[str, int], int] | None,
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None,
    previous: Mapping[tuple[str, int], str],
    assignable: int | None,
    lag_bound_known: bool,
    lag_bound: float | None,
) -> dict[str, Any]: ...
