"""Drop-in partition assignors for kafka-python 3.0.x.

Swap one line of consumer configuration::

    from kafka import KafkaConsumer
    from kassign.kafka_python import CooperativeStickyAssignor

    consumer = KafkaConsumer("orders", group_id="billing",
                             partition_assignment_strategy=[CooperativeStickyAssignor])

Classes (protocol name in brackets): :class:`RangeAssignor` ("range"), :class:`RoundRobinAssignor`
("roundrobin"), :class:`StickyAssignor` ("sticky"), :class:`CooperativeStickyAssignor`
("cooperative-sticky"), :class:`LagAwareAssignor` ("lag-aware"), :class:`FairAssignor` ("fair"),
:class:`FailoverAssignor` ("failover"). Each is a subclass of kafka-python's
``AbstractPartitionAssignor`` and can be configured as a class (kafka-python instantiates it) or
as a configured instance::

    FailoverAssignor(priority=10)
    LagAwareAssignor(lag_provider=provider, sticky=True)
    CooperativeStickyAssignor(rack="eu-west-1a")   # kafka-python does not pass client_rack on

Wire compatibility with Java consumers (same names, same bytes):

* every member sends a ``ConsumerProtocolSubscription`` v3, with ``rack_id`` when ``rack`` is set;
* cooperative-sticky sends its owned partitions, the generation field and 4-byte generation user
  data, and supports the COOPERATIVE protocol (and EAGER, when combined with eager assignors);
* sticky sends ``StickyAssignorUserData`` v1 (owned partitions + generation; null before the first
  assignment), the generation field and an empty owned list;
* failover sends its priority as a big-endian int32 user data.

As leader, every member's metadata (as kafka-python decoded it) is read, assigned and encoded in one
call into kassign's Rust core (history for the sticky strategies as Java reads it); the result is
each member's assignment bytes. A member whose history cannot be decoded is logged and treated as
having none - one bad member never fails the rebalance. A sticky member whose user data is set has
its history there (it wins over the subscription's owned-partitions and generation fields, as in
Java), so those fields are not read: a malformed owned field that would not be used is not logged.
State (owned partitions, generation) is kept per consumer, even when one instance is shared by
several consumers in a process.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import _adapter_common as common

try:
    from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise common.client_missing("kafka-python", "kafka-python", _exc) from None

import kassign

# The drop-in classes, one per row of the strategy table, defined at the end of the module.
__all__ = list(common.CLASS_NAMES)


class KassignAssignor(AbstractPartitionAssignor):  # type: ignore[misc]  # kafka-python has no type hints
    """Base class: a kassign strategy behind kafka-python's assignor interface.

    Arguments:
        rack: this consumer's rack (``client.rack``), sent in the subscription (v3) for rack-aware
            strategies. kafka-python does not hand its ``client_rack`` setting to assignors, so pass
            it here too.
        **options: strategy options passed to :func:`kassign.assign` by the leader.
    """

    name = "kassign"
    strategy = ""
    version = 3
    #: failover's priority (set by ``FailoverAssignor``); None elsewhere.
    priority: int | None = None
    #: lag-aware's ``sticky=True`` (set by ``LagAwareAssignor``): send owned partitions as sticky does.
    sticky: bool = False

    def __init__(self, *, rack: str | None = None, **options: Any) -> None:
        if self.strategy not in kassign.STRATEGIES:
            raise ImportError(
                f"kassign strategy {self.strategy!r} is not in this build (available: {', '.join(kassign.STRATEGIES)})"
            )
        if rack is not None and not isinstance(rack, str):
            raise TypeError(f"rack: expected a str or None, got {type(rack).__name__}")
        self.rack = rack or None
        self.options = dict(options)
        self._states = common.StateStore()

    # -- member side ---------------------------------------------------------------------------
    def _state(self) -> Any:
        return self._states.get(common.current_consumer())

    def metadata(self, topics: Iterable[str]) -> bytes:
        """The JoinGroup subscription bytes (Java's format for this strategy)."""
        return common.encode_member_metadata(
            self.name, topics, self._state(), rack=self.rack, priority=self.priority, sticky=self.sticky
        )

    def on_assignment(self, assignment: Any, generation: int) -> None:
        """Remember this consumer's partitions and generation (history for the next rebalance)."""
        state = self._state()
        partitions = assignment.partitions() if hasattr(assignment, "partitions") else assignment
        state.record(partitions, generation if isinstance(generation, int) else -1)

    @property
    def owned_partitions(self) -> tuple[kassign.TopicPartition, ...]:
        """Partitions of the last assignment (of the consumer calling, or of direct calls)."""
        state: common.ConsumerState = self._state()
        return state.owned

    @property
    def generation(self) -> int:
        state: common.ConsumerState = self._state()
        return state.generation

    # -- leader side ---------------------------------------------------------------------------
    def assign(self, cluster: Any, members: Any) -> dict[str, bytes]:
        """Leader: read every member's decoded metadata and assign with kassign.

        Arguments:
            cluster: kafka-python ``ClusterMetadata``.
            members: ``JoinGroupResponseMember`` list (``member_id``, ``group_instance_id``,
                decoded ``metadata``).
        Returns:
            {member_id: assignment bytes}: ``ConsumerProtocolAssignment`` v3 with null user data,
            as Java's built-ins send it, encoded in Rust (kafka-python sends bytes as they are).
        """
        return common.leader_assign(self.name, self.strategy, "kafka-python", members, cluster, self.options)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}(rack={self.rack!r}{extra})"


class _Cooperative:
    """cooperative-sticky: the COOPERATIVE protocol (and EAGER, when combined with eager
    assignors, in which case the consumer owns nothing when it joins)."""

    name: str
    rack: str | None
    _states: common.StateStore

    def supported_protocols(self) -> list[Any]:
        return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> bytes:
        consumer = common.current_consumer()
        state = self._states.get(consumer)
        if getattr(consumer, "_rebalance_protocol", None) == RebalanceProtocol.EAGER:
            # Combined with eager assignors the consumer revokes everything before joining, so it
            # owns nothing (Java sends its then-empty assigned partitions); keep the generation.
            state = common.ConsumerState(owned=(), generation=state.generation, assigned=state.assigned)
        return common.encode_member_metadata(self.name, topics, state, rack=self.rack)


_CLASSES = common.make_classes(KassignAssignor, {"cooperative-sticky": (_Cooperative,)}, __name__)
RangeAssignor: type[KassignAssignor] = _CLASSES["RangeAssignor"]
RoundRobinAssignor: type[KassignAssignor] = _CLASSES["RoundRobinAssignor"]
StickyAssignor: type[KassignAssignor] = _CLASSES["StickyAssignor"]
CooperativeStickyAssignor: type[KassignAssignor] = _CLASSES["CooperativeStickyAssignor"]
LagAwareAssignor: type[KassignAssignor] = _CLASSES["LagAwareAssignor"]
FairAssignor: type[KassignAssignor] = _CLASSES["FairAssignor"]
FailoverAssignor: type[KassignAssignor] = _CLASSES["FailoverAssignor"]
