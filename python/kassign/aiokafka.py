"""Drop-in partition assignors for aiokafka 0.14.

Swap one line of consumer configuration::

    from aiokafka import AIOKafkaConsumer
    from kassign.aiokafka import StickyAssignor

    consumer = AIOKafkaConsumer("orders", group_id="billing",
                                partition_assignment_strategy=(StickyAssignor,))

Classes (protocol name in brackets): :class:`RangeAssignor` ("range"), :class:`RoundRobinAssignor`
("roundrobin"), :class:`StickyAssignor` ("sticky"), :class:`CooperativeStickyAssignor`
("cooperative-sticky"), :class:`LagAwareAssignor` ("lag-aware"), :class:`FairAssignor` ("fair"),
:class:`FailoverAssignor` ("failover"). They implement aiokafka's classmethod-style
``AbstractPartitionAssignor`` and work both as classes (as aiokafka's own assignors are configured)
and as configured instances (``FailoverAssignor(priority=10)``).

Differences from the kafka-python adapter, all forced by aiokafka:

* **Eager only.** aiokafka has no cooperative rebalancing (it revokes everything before every
  join), so :class:`CooperativeStickyAssignor` here gives the complete sticky assignment in one
  round (nothing is withheld; a withheld partition would stay unowned, since aiokafka members
  never run the follow-up round). It sends Java's cooperative-sticky subscription bytes, so a
  Java or kafka-python leader reads its history, but do not mix it with consumers running the
  COOPERATIVE protocol: with aiokafka as leader they could see a partition move directly.
* **History in user data.** aiokafka's leader decodes every member's subscription as v0 (topics and
  user data only), so sticky history travels in the user data: ``StickyAssignorUserData`` v1 for
  "sticky" (as Java), and for "cooperative-sticky" the 4-byte generation Java reads followed by the
  owned partitions (Java ignores the trailing bytes). Racks and static member ids do not reach an
  aiokafka leader.
* **Per-consumer state.** aiokafka's own sticky assignor keeps its state on the class, shared by all
  consumers of a process (aio-libs/aiokafka#1175). Here state is kept per consumer (keyed by the
  consumer's group coordinator) whether a class or an instance is configured, and the generation is
  read from the coordinator (aiokafka never reports it to assignors, #1176).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import _adapter_common as common

try:
    from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise common.client_missing("aiokafka", "aiokafka", _exc) from None

import kassign

# The drop-in classes, one per row of the strategy table, defined at the end of the module.
__all__ = list(common.CLASS_NAMES)


class hybridmethod:
    """A method bound to the instance when called on one, else to the class (aiokafka calls
    assignor methods on whatever object was configured, usually the class)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, obj: Any, owner: Any) -> Any:
        return self.fn.__get__(owner if obj is None else obj, owner)


def _store(target: Any) -> common.StateStore:
    """The StateStore of an instance, or of a class used directly (one per class, never inherited)."""
    if isinstance(target, type):
        store = target.__dict__.get("_class_states")
        if store is None:
            store = common.StateStore()
            setattr(target, "_class_states", store)  # noqa: B010 - a class attribute set at run time
        return store
    states: common.StateStore = target._states
    return states


class KassignAssignor(AbstractPartitionAssignor):  # type: ignore[misc]  # aiokafka has no type hints
    """Base class: a kassign strategy behind aiokafka's assignor interface.

    Arguments:
        rack: this consumer's rack, sent in the subscription (v3) for Java/kafka-python leaders.
        **options: strategy options passed to :func:`kassign.assign` by the leader.
    """

    name = "kassign"
    strategy = ""
    #: Used when the class itself is configured (not an instance).
    rack: str | None = None
    options: Mapping[str, Any] = {}
    priority: int | None = None
    #: lag-aware's ``sticky=True`` (set by ``LagAwareAssignor``): send owned partitions as sticky does.
    sticky: bool = False

    def __init__(self, *, rack: str | None = None, **options: Any) -> None:
        if rack is not None and not isinstance(rack, str):
            raise TypeError(f"rack: expected a str or None, got {type(rack).__name__}")
        type(self)._check_available()
        self.rack = rack or None
        self.options = dict(options)
        self._states = common.StateStore()

    @classmethod
    def _check_available(cls) -> None:
        if cls.strategy not in kassign.STRATEGIES:
            raise ImportError(
                f"kassign strategy {cls.strategy!r} is not in this build (available: {', '.join(kassign.STRATEGIES)})"
            )

    # -- member side ---------------------------------------------------------------------------
    @hybridmethod
    def metadata(self, topics: Iterable[str]) -> bytes:
        """The JoinGroup subscription bytes (Java's format for this strategy)."""
        state = _store(self).get(common.current_consumer())
        return common.encode_member_metadata(
            self.name,
            topics,
            state,
            rack=self.rack,
            priority=self.priority,
            embed_owned_in_user_data=True,
            sticky=self.sticky,
        )

    @hybridmethod
    def on_assignment(self, assignment: Any) -> None:
        """Remember this consumer's partitions, and the generation from its coordinator."""
        consumer = common.current_consumer()
        state = _store(self).get(consumer)
        generation = getattr(consumer, "generation", -1)
        partitions = assignment.partitions() if hasattr(assignment, "partitions") else assignment
        state.record(partitions, generation if isinstance(generation, int) and generation >= 0 else state.generation)

    @hybridmethod
    def on_generation_assignment(self, generation: int) -> None:
        """Set the generation (aiokafka 0.14 never calls this; kept for callers that do)."""
        _store(self).get(common.current_consumer()).generation = generation

    def state(self, consumer: Any = None) -> common.ConsumerState:
        """This instance's state for ``consumer`` (a coordinator; None = direct calls)."""
        return _store(self).get(consumer)

    # -- leader side ---------------------------------------------------------------------------
    @hybridmethod
    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, bytes]:
        """Leader: read every member's metadata (v0 as aiokafka decodes it) and assign with kassign.

        Returns:
            {member_id: assignment bytes}: ``ConsumerProtocolMemberAssignment`` v3 with null user
            data, encoded in Rust (aiokafka sends bytes as they are).
        """
        if isinstance(self, type):
            self._check_available()
        return common.leader_assign(
            self.name, self._compute_strategy or self.strategy, "aiokafka", members, cluster, self.options
        )

    #: The kassign strategy the leader runs when it differs from ``strategy`` (cooperative-sticky
    #: runs its eager counterpart).
    _compute_strategy = ""

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}(rack={self.rack!r}{extra})"


class _EagerCooperative:
    """cooperative-sticky run eagerly (aiokafka has no cooperative protocol): the complete
    sticky assignment in one round. See the module docstring before mixing with other clients."""

    _compute_strategy = "sticky"

    @classmethod
    def _check_available(cls) -> None:
        if "sticky" not in kassign.STRATEGIES:
            raise ImportError(
                f"kassign strategy 'sticky' is not in this build (available: {', '.join(kassign.STRATEGIES)})"
            )


_CLASSES = common.make_classes(KassignAssignor, {"cooperative-sticky": (_EagerCooperative,)}, __name__)
RangeAssignor: type[KassignAssignor] = _CLASSES["RangeAssignor"]
RoundRobinAssignor: type[KassignAssignor] = _CLASSES["RoundRobinAssignor"]
StickyAssignor: type[KassignAssignor] = _CLASSES["StickyAssignor"]
CooperativeStickyAssignor: type[KassignAssignor] = _CLASSES["CooperativeStickyAssignor"]
LagAwareAssignor: type[KassignAssignor] = _CLASSES["LagAwareAssignor"]
FairAssignor: type[KassignAssignor] = _CLASSES["FairAssignor"]
FailoverAssignor: type[KassignAssignor] = _CLASSES["FailoverAssignor"]
