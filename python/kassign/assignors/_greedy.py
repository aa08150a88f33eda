"""What the Python strategies share: their inputs prepared once, the result lists, and the topic
order and placement of ``fair`` and ``lag-aware``'s global mode.

Both strategies place partitions one at a time, in an order they choose, on the "least-loaded"
member among the partition's eligible members (the subscribers of its topic). The placement loop
is the Rust core's (``rust/core/src/greedy.rs``, ``_core.greedy_deal``); this module decides the order.

Members are dense indices ``0..n-1`` assigned in member-id order, so comparing indices is
comparing member ids (the tie-break of every rule here).

Load of member ``i`` = ``(count[i], lag[i])``. Two selection rules:

* ``skew == 0`` (count first): the eligible member with the smallest ``(count, lag, index)``.
* ``skew > 0``: among eligible members whose count is at most ``min count + skew`` (the minimum
  taken over the eligible members), the smallest ``(lag, count, index)``. Counts then never
  differ by more than ``skew + 1`` among members eligible for the same partitions.
  With ``skew == 0`` both rules agree.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._types import Member, TopicPartition

#: The largest ``max_skew`` the kernels take: a count never exceeds the partition cap, so any
#: larger skew acts alike.
_KERNEL_SKEW_MAX = 2**64 - 1


def kernel_skew(skew: int) -> int:
    """``max_skew`` as the kernels take it (an unsigned 64-bit int; larger values act alike)."""
    return min(skew, _KERNEL_SKEW_MAX)


def build_result(
    members: Sequence[str], sorted_ids: Sequence[str], owners: Mapping[str, Sequence[int]]
) -> dict[str, list[TopicPartition]]:
    """member id -> partitions sorted by (topic, partition), every member present, in input order.

    ``owners`` maps each placed topic to the owner index (into ``sorted_ids``) of each partition.
    """
    from .. import _core
    from .._types import TopicPartition

    # Built in Rust: GC-untracked TopicPartition objects (a million tracked ones make CPython run
    # full collections that stall every thread) and short GIL releases between chunks.
    topics = sorted(owners)
    lists = _core.result_lists(TopicPartition, len(sorted_ids), topics, [owners[t] for t in topics])
    rank = {m: k for k, m in enumerate(sorted_ids)}
    return {m: lists[rank[m]] for m in members}


#: The key of :attr:`Inputs.shared` holding each topic's lag array: topic -> the lag of each of its
#: partitions (0 without one), or None when they are all 0. Filled per topic by the strategies that
#: read it (lag-aware), or for every topic up front by the fleet core, which has the arrays decoded.
TOPIC_LAGS = "topic-lags"


class Inputs:
    """A Python strategy's arguments with what every strategy derives from them, computed once.

    ``kassign.assign`` builds one per call. The fleet job builds one per member set and hands the
    same object to every Python strategy of that churn round, so the sorted ids, the subscribers
    of each topic and the per-topic lag arrays are derived once per round instead of once per
    strategy. Derived values are read-only for the strategies (they return new owner lists).
    ``previous`` (:meth:`read_previous`) is what the sticky strategies read of the members' history
    (owned partitions and generations): topic -> {member index: [partition]} for the partitions
    whose previous owner (the highest generation's claim; a tie between members leaves none) is
    that member, over the subscribed topics (``subs``) and partitions in range. The fleet job
    passes it from the core (:meth:`with_previous`) instead of members that carry their owned
    partitions.
    ``shared`` holds values derived from ``partitions_per_topic`` and ``lags`` alone (e.g. the lag
    array of each topic): the fleet job passes one dict to every ``Inputs`` of a group, since
    those two are the same in every churn round (:data:`TOPIC_LAGS`: the lag arrays).
    ``ids`` and ``subs``, when given, are ``sorted(members)`` and :attr:`subs` already derived by
    the caller (the fleet core derives both from its interned problem, with the same core function
    as :func:`subscribers_by_topic`).
    """

    __slots__ = ("_subs", "ids", "lags", "members", "memo", "partitions_per_topic", "previous", "shared")

    def __init__(
        self,
        members: dict[str, Member],
        partitions_per_topic: dict[str, int],
        lags: dict[tuple[str, int], int] | None = None,
        *,
        shared: dict[str, Any] | None = None,
        ids: list[str] | None = None,
        subs: dict[str, tuple[int, ...]] | None = None,
    ) -> None:
        self.members = members
        self.partitions_per_topic = partitions_per_topic
        self.lags = lags
        self.ids = sorted(members) if ids is None else ids
        self._subs: dict[str, tuple[int, ...]] | None = subs
        #: Values a strategy derives from these inputs alone, by name (e.g. lag arrays).
        self.memo: dict[str, Any] = {}
        #: Values derived from ``partitions_per_topic`` and ``lags`` alone, by name.
        self.shared: dict[str, Any] = {} if shared is None else shared
        self.previous: dict[str, dict[int, list[int]]] | None = None

    @property
    def subs(self) -> dict[str, tuple[int, ...]]:
        """:func:`subscribers_by_topic` of the members (ids sorted)."""
        if self._subs is None:
            m = self.members
            self._subs = subscribers_by_topic(self.ids, [m[i].topics for i in self.ids], self.partitions_per_topic)
        return self._subs

    def read_previous(self) -> dict[str, dict[int, list[int]]]:
        """:attr:`previous` (see the class), derived on first use with :attr:`subs` by one read of
        the group in the core (``_core.sticky_inputs``: the members checked and interned once)."""
        if self.previous is None:
            from .. import _core

            subs, self.previous = _core.sticky_inputs(self.members, self.partitions_per_topic)
            if self._subs is None:
                self._subs = subs
        return self.previous

    def with_previous(self, previous: dict[str, dict[int, list[int]]]) -> Inputs:
        """The same inputs with the members' history given as ``previous`` (see the class)."""
        out = Inputs.__new__(Inputs)
        out.members, out.partitions_per_topic, out.lags = self.members, self.partitions_per_topic, self.lags
        out.ids, out._subs, out.memo, out.previous = self.ids, self.subs, self.memo, previous
        out.shared = self.shared
        return out


def subscribers_by_topic(
    sorted_ids: Sequence[str], topics_of: Sequence[Sequence[str]], partitions_per_topic: dict[str, int]
) -> dict[str, tuple[int, ...]]:
    """topic -> indices of its subscribers (ascending), for topics with metadata and >= 1 partition.

    ``topics_of[i]`` is the topics of member ``sorted_ids[i]``. Topics a member subscribes to that
    are missing from ``partitions_per_topic`` have no metadata and are skipped, as are topics with
    0 partitions. Topics with the same subscribers share one tuple object (so callers can intern
    eligible sets by identity). Dict order: first appearance over the members, each member's
    topics in its order. Computed in the core (``_core.subscribers_by_topic``, the derivation the
    fleet uses too); members sharing one subscription object are read once.
    """
    from .. import _core

    result: dict[str, tuple[int, ...]] = _core.subscribers_by_topic(list(topics_of), partitions_per_topic)
    return result


def deal_global(
    n_members: int,
    subs: dict[str, tuple[int, ...]],
    partitions_per_topic: dict[str, int],
    arrays: Mapping[str, Sequence[int]],
    skew: int = 0,
) -> dict[str, array[int]]:
    """Place every partition of ``subs``' topics with counts and lags kept across all topics.

    Order: topics with the fewest subscribers first, then lag descending, then topics with more
    partitions, then topic name, then partition. Each partition goes to the member the selection
    rule (module docstring, ``skew`` = ``max_skew``) chooses among its topic's subscribers.
    ``arrays`` holds the lag of each partition of the topics that have any (absent topics: all 0).
    Returns topic -> owner indices (``array('i')``). With no lags and no skew this is KIP-49's
    ``fair``.

    The placement loop runs in the Rust core (``_core.greedy_deal``).
    """
    from .. import _core

    topics = sorted(subs, key=lambda t: (len(subs[t]), -partitions_per_topic[t], t))
    sizes = [partitions_per_topic[t] for t in topics]
    lags = [arrays.get(t) for t in topics] if arrays else None
    owned = _core.greedy_deal(n_members, [subs[t] for t in topics], sizes, lags, kernel_skew(skew))
    return dict(zip(topics, owned))
