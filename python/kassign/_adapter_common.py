"""Shared machinery of the client adapters (:mod:`kassign.kafka_python`, :mod:`kassign.aiokafka`).

* What each strategy puts on the wire (:func:`encode_member_metadata`), byte-compatible with
  Apache Kafka's Java consumers.
* The leader's step (:func:`leader_assign`): the members' metadata as the client decoded it,
  read, assigned and encoded in the Rust core; never raising for a member's bytes: a member whose
  history cannot be decoded is logged and treated as having none, so one bad member never fails a
  rebalance.
* Per-consumer assignor state (:class:`ConsumerState`, :func:`state_for`): kept per consumer even
  when one assignor class or instance is shared by several consumers in a process.
"""

from __future__ import annotations

import logging
import sys
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

import kassign
from kassign import _core, protocol
from kassign._inputs import check_options, check_partition_racks
from kassign._types import Member, TopicPartition
from kassign.assignors import PYTHON_STRATEGIES

log = logging.getLogger("kassign.adapters")


@dataclass(frozen=True)
class StrategySpec:
    """One row of :data:`STRATEGY_TABLE`: a drop-in class and how its strategy behaves on the wire.

    ``history`` is how the strategy carries a member's history:

    * ``"coop"``: subscription v3 owned partitions + generation field, 4-byte generation user data;
    * ``"sticky"``: ``StickyAssignorUserData`` v1 (Java's eager ``StickyAssignor``), empty owned list;
    * ``"priority"``: failover's int32 priority user data;
    * ``None``: no history.
    """

    class_name: str
    name: str
    history: str | None
    doc: str


#: The seven drop-in classes of each client module, built from this table
#: (:func:`make_classes`); the clients add only what their interfaces differ in.
STRATEGY_TABLE: tuple[StrategySpec, ...] = (
    StrategySpec(
        "RangeAssignor",
        "range",
        None,
        "``range``: per topic, contiguous ranges over the subscribers (static members first).",
    ),
    StrategySpec(
        "RoundRobinAssignor",
        "roundrobin",
        None,
        "``roundrobin``: all partitions dealt round-robin over the members that subscribe to them.",
    ),
    StrategySpec(
        "StickyAssignor",
        "sticky",
        "sticky",
        "``sticky`` (eager): balanced, keeps as many owned partitions as possible; history in\n"
        "``StickyAssignorUserData`` v1, as Java's ``StickyAssignor``.",
    ),
    StrategySpec(
        "CooperativeStickyAssignor",
        "cooperative-sticky",
        "coop",
        "``cooperative-sticky`` (KIP-429): sticky, and a partition that changes owner is withheld for\n"
        "one round so no two members own it at once. Wire-compatible with Java's\n"
        "``CooperativeStickyAssignor``.",
    ),
    StrategySpec(
        "LagAwareAssignor",
        "lag-aware",
        None,
        "``lag-aware``: spreads consumer lag evenly (partition counts first).\n\n"
        "Arguments:\n"
        "    lag_provider: object with ``lags(partitions) -> mapping or None`` (see :mod:`kassign.lag`),\n"
        "        asked by the leader for the lag of every partition; without it every lag is 0.\n"
        "    sticky: keep owned partitions while the count rule allows; members then send their\n"
        "        owned partitions as the sticky classes do (``StickyAssignorUserData`` v1).\n"
        "        Configure every member of the group the same way.\n"
        '    **options: ``mode`` ("proposal", "per-topic", "global"), ``max_skew``, ``improve``,\n'
        "        ``min_gain`` (see :mod:`kassign.assignors.lag_aware`).",
    ),
    StrategySpec(
        "FairAssignor", "fair", None, "``fair`` (KIP-49): balanced partition counts across heterogeneous subscriptions."
    ),
    StrategySpec(
        "FailoverAssignor",
        "failover",
        "priority",
        "``failover``: the highest-priority subscriber of a topic gets all its partitions.\n\n"
        "Arguments:\n"
        "    priority: this consumer's priority (int32; higher wins). None = lowest.",
    ),
)

#: Strategy name -> how it carries history on the wire (see :class:`StrategySpec`).
#: The names of the drop-in classes, as each adapter module (``kassign.kafka_python``,
#: ``kassign.aiokafka``) exports them.
CLASS_NAMES: tuple[str, ...] = tuple(spec.class_name for spec in STRATEGY_TABLE)
HISTORY: dict[str, str | None] = {spec.name: spec.history for spec in STRATEGY_TABLE}
#: Strategies whose members carry history only when configured with ``sticky=True`` (then exactly
#: as "sticky": ``StickyAssignorUserData`` v1); their leader reads it whenever it is sent.
OPTIONAL_HISTORY: dict[str, str] = {"lag-aware": "sticky"}


class LagAwareOptions:
    """``lag-aware``'s constructor: a lag provider, passed to the strategy as an option, and
    ``sticky=True``, which also makes the member send its owned partitions as the sticky classes do
    (:data:`OPTIONAL_HISTORY`). Options are checked here, so bad values fail at configuration
    rather than in the leader's rebalance."""

    sticky: bool = False

    def __init__(
        self, *, lag_provider: Any = None, sticky: bool = False, rack: str | None = None, **options: Any
    ) -> None:
        from .assignors.lag_aware import parse_options

        if lag_provider is not None:
            options["lag_provider"] = lag_provider
        if sticky is not False:
            options["sticky"] = sticky
        parse_options(options)
        super().__init__(rack=rack, **options)  # type: ignore[call-arg]
        self.sticky = sticky is True


class FailoverOptions:
    """``failover``'s constructor: this consumer's priority, sent as its user data."""

    priority: int | None = None
    rack: str | None

    def __init__(self, *, priority: int | None = None, rack: str | None = None, **options: Any) -> None:
        if priority is not None and (
            not isinstance(priority, int) or isinstance(priority, bool) or not -(2**31) <= priority < 2**31
        ):
            raise ValueError(f"priority: expected a signed 32-bit int or None, got {priority!r}")
        super().__init__(rack=rack, **options)  # type: ignore[call-arg]
        self.priority = priority

    def __repr__(self) -> str:
        return f"{type(self).__name__}(priority={self.priority!r}, rack={self.rack!r})"


def make_classes(base: type, extras: Mapping[str, tuple[type, ...]], module: str) -> dict[str, type]:
    """The drop-in classes of one client: one subclass of ``base`` per row of
    :data:`STRATEGY_TABLE`, with ``extras[name]`` (mixins) in front of ``base``."""
    shared: dict[str, tuple[type, ...]] = {"lag-aware": (LagAwareOptions,), "failover": (FailoverOptions,)}
    out: dict[str, type] = {}
    for spec in STRATEGY_TABLE:
        bases = tuple(extras.get(spec.name, ())) + shared.get(spec.name, ()) + (base,)
        out[spec.class_name] = type(
            spec.class_name,
            bases,
            {
                "__module__": module,
                "__qualname__": spec.class_name,
                "__doc__": spec.doc,
                "name": spec.name,
                "strategy": spec.name,
            },
        )
    return out


@dataclass
class ConsumerState:
    """What one consumer's assignor remembers between rebalances."""

    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    assigned: bool = False  # False until the first assignment (Java sends null sticky user data then)

    def record(self, partitions: Iterable[Any], generation: int) -> None:
        self.owned = tuple(sorted({TopicPartition(tp[0], tp[1]) for tp in partitions}))
        self.generation = generation
        self.assigned = True


#: Coordinator classes of the clients, whose instances identify one consumer.
_COORDINATOR_MODULES = ("kafka.coordinator.", "aiokafka.consumer.group_coordinator")


def current_consumer(max_depth: int = 8) -> Any:
    """The client coordinator object (one per consumer) calling into the assignor, or None.

    The clients call ``metadata``/``on_assignment``/``assign`` from methods of their group
    coordinator; its ``self`` identifies the consumer. aiokafka's join helper
    (``CoordinatorGroupRebalance``) is mapped to the coordinator it serves.
    """
    frame: FrameType | None = sys._getframe(1)
    depth = 0
    while frame is not None and depth < max_depth:
        obj = frame.f_locals.get("self")
        if obj is not None:
            module = type(obj).__module__ or ""
            if module.startswith(_COORDINATOR_MODULES):
                inner = getattr(obj, "_coordinator", None)
                if inner is not None and (type(inner).__module__ or "").startswith(_COORDINATOR_MODULES):
                    return inner
                return obj
        frame = frame.f_back
        depth += 1
    return None


class StateStore:
    """Per-consumer :class:`ConsumerState`, keyed weakly by the consumer's coordinator.

    Calls made outside a client (tests, benchmarks, direct use) share one default state per store.
    """

    def __init__(self) -> None:
        self._by_consumer: weakref.WeakKeyDictionary[Any, ConsumerState] = weakref.WeakKeyDictionary()
        self.default = ConsumerState()

    def get(self, consumer: Any) -> ConsumerState:
        if consumer is None:
            return self.default
        try:
            state = self._by_consumer.get(consumer)
            if state is None:
                state = self._by_consumer[consumer] = ConsumerState()
            return state
        except TypeError:  # not weak-referenceable
            return self.default

    def __len__(self) -> int:
        return len(self._by_consumer)


def encode_member_metadata(
    strategy: str,
    topics: Iterable[str],
    state: ConsumerState,
    *,
    rack: str | None = None,
    priority: int | None = None,
    embed_owned_in_user_data: bool = False,
    sticky: bool = False,
) -> bytes:
    """The subscription bytes a member sends in JoinGroup, matching Java's for the same strategy.

    * cooperative-sticky: v3 with the owned partitions, generation field and 4-byte generation
      user data (``embed_owned_in_user_data`` appends the owned list after the int32, for leaders
      that cannot read the v1+ fields; Java reads only the first four bytes).
    * sticky: v3 with an empty owned list, the generation field and StickyAssignorUserData v1
      (null before the first assignment).
    * failover: v3 with the int32 priority as user data (none when ``priority`` is None).
    * lag-aware with ``sticky=True``: as sticky (:data:`OPTIONAL_HISTORY`).
    * the others: v3 with topics (and rack) only.
    """
    kind = HISTORY.get(strategy)
    if sticky and strategy in OPTIONAL_HISTORY:
        kind = OPTIONAL_HISTORY[strategy]
    topics = sorted(set(topics))
    user_data: bytes | None
    if kind == "coop":
        user_data = protocol.encode_generation(state.generation)
        if embed_owned_in_user_data:
            user_data += protocol.encode_sticky_user_data(state.owned)
        return protocol.encode_subscription(topics, user_data, state.owned, state.generation, rack)
    if kind == "sticky":
        user_data = protocol.encode_sticky_user_data(state.owned, state.generation) if state.assigned else None
        return protocol.encode_subscription(topics, user_data, (), state.generation, rack)
    if kind == "priority":
        user_data = protocol.encode_priority(priority) if priority is not None else None
        return protocol.encode_subscription(topics, user_data, (), -1, rack)
    return protocol.encode_subscription(topics, None, (), -1, rack)


def partitions_per_topic(cluster: Any, topics: Iterable[str]) -> dict[str, int]:
    """Partition counts from a client's ClusterMetadata; topics without metadata are skipped."""
    out: dict[str, int] = {}
    for topic in sorted(set(topics)):
        parts = cluster.partitions_for_topic(topic)
        if not parts:
            if parts is None:
                log.warning("no partition metadata for topic %s; it is not assigned this round", topic)
            continue
        ids = sorted(parts)  # one ordered run for the clients' sets of ints: faster than max()
        count = ids[-1] + 1
        if count != len(ids):
            log.warning(
                "topic %s: partition ids %s are not contiguous; assigning partitions 0 to %d",
                topic,
                ids,
                count - 1,
            )
        out[topic] = count
    return out


def partition_racks(cluster: Any, counts: Mapping[str, int]) -> dict[tuple[str, int], list[str]] | None:
    """(topic, partition) -> racks of all its replicas, from client metadata (best effort, or None)."""
    try:
        partitions = getattr(cluster, "_partitions", None)
        if not partitions:
            return None
        out: dict[tuple[str, int], list[str]] = {}
        for topic in counts:
            for p, meta in (partitions.get(topic) or {}).items():
                replicas = getattr(meta, "replicas", None)
                if replicas is None:
                    replicas = getattr(meta, "replica_nodes", None) or ()
                racks = set()
                for node in replicas:
                    broker = cluster.broker_metadata(node)
                    rack = getattr(broker, "rack", None)
                    if rack:
                        racks.add(rack)
                if racks:
                    out[(topic, p)] = sorted(racks)
        return out or None
    except Exception as exc:  # metadata internals differ between client versions; racks are optional
        log.debug("no partition rack metadata: %s", exc)
        return None


def _cluster_metadata(
    cluster: Any, topics: list[str], any_rack: bool
) -> tuple[dict[str, int], list[tuple[str, int, list[str]]] | None]:
    """Partition counts of the subscribed ``topics`` and, when a member has a rack, the replica
    racks (checked as :func:`kassign.assign` checks them), from the client's metadata."""
    counts = partitions_per_topic(cluster, topics)
    racks = partition_racks(cluster, counts) if any_rack else None
    return counts, (check_partition_racks(racks) or None) if racks else None


def _warn(message: str) -> None:
    log.warning("%s", message)


def leader_assign(
    protocol_name: str,
    strategy: str,
    client: str,
    members: Any,
    cluster: Any,
    options: Mapping[str, Any],
) -> dict[str, bytes]:
    """The leader's step: every member's metadata as ``client`` decoded it, assigned with
    ``strategy`` over the client's metadata, each member's assignment encoded as the bytes the
    leader sends in SyncGroup (``ConsumerProtocolAssignment`` v3, grouped by topic, sorted, null
    user data, as Java's built-in assignors).

    Each member's history is read by the rule of ``protocol_name`` (in the Rust core:
    ``rust/core/src/wire.rs``); a member whose history cannot be decoded is logged and treated as
    having none. For the Rust strategies the members are read, assigned and encoded in one call
    into the core; the strategies written in Python get :class:`kassign.Member` objects read in Rust
    and their result is encoded in Rust.
    """
    if strategy in PYTHON_STRATEGIES:
        decoded: dict[str, Member] = _core.drop_in_members(protocol_name, client, members, _warn)
        counts = partitions_per_topic(cluster, {t for m in decoded.values() for t in m.topics})
        racks = partition_racks(cluster, counts) if any(m.rack for m in decoded.values()) else None
        result = kassign.assign(strategy, decoded, counts, partition_racks=racks, **dict(options))
        for member_id in decoded:
            result.setdefault(member_id, [])
        out: dict[str, bytes] = _core.encode_assignments(result)
        return out

    def metadata(topics: list[str], any_rack: bool) -> tuple[dict[str, int], Any]:
        answer = _cluster_metadata(cluster, topics, any_rack)
        check_options("assign", strategy, False, options)  # after the metadata look-up, as kassign.assign
        return answer

    assigned: dict[str, bytes] = _core.drop_in_assign(strategy, protocol_name, client, members, metadata, _warn)
    return assigned


def client_missing(client: str, extra: str, exc: ImportError) -> ImportError:
    return ImportError(
        f"kassign.{extra.replace('-', '_')} needs the {client} client, which is not installed: "
        f"pip install kassign[{extra}]  ({exc})"
    )
