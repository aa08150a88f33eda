"""Consumer lag: how it is computed from offsets, and where the offsets come from.

Lag of a partition for a consumer group (the rule of the lag-aware proposal, KAFKA-5337):

* ``next`` = the group's committed offset when there is one; otherwise it is where
  ``auto.offset.reset`` would start: the end offset for ``"latest"`` (case-insensitive, and the
  default), the beginning offset for any other value (``"earliest"``, ``"none"``, ...).
* ``lag = max(end - next, 0)``. Missing beginning or end offsets count as 0.

Deliberate difference from the proposal's prototype: **a committed offset below the log start
(the beginning offset, after retention or ``delete_records``) counts from the log start**, i.e.
``next = max(committed, begin)``. Those records no longer exist, so the consumer will resume at the
log start (or reset); the prototype's ``end - committed`` overstates the lag by the deleted
records. A committed offset < 0 (Kafka's "no offset", -1) counts as no committed offset.

Providers turn a list of partitions into ``{(topic, partition): lag}`` (or None when the lags
cannot be read); :func:`kassign.assign` takes the mapping as ``lags=``, and the ``lag-aware``
strategy also accepts a provider as ``lag_provider=``:

* :class:`StaticLagProvider`: a fixed mapping (tests, simulations, lags from elsewhere).
* :class:`KafkaLagProvider`: reads the group's committed offsets and the partitions' beginning and
  end offsets from a Kafka cluster with its **own** kafka-python admin client, on a worker thread,
  under a timeout. It never touches the consumer's client: kafka-python 3.0 raises when a
  synchronous fetch runs on the consumer's network thread inside ``assign`` (kafka-python issue
  3112). On any failure or timeout it logs a warning and returns None, and ``lag-aware`` falls back
  to count-only balance.

kafka-python is imported lazily; everything else here works without it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from . import _core
from ._inputs import check_lags

__all__ = [
    "KafkaLagProvider",
    "LagProvider",
    "StaticLagProvider",
    "compute_lag",
    "compute_lags",
    "next_offset",
]

log = logging.getLogger(__name__)

Key = tuple[str, int]


def _check_reset(auto_offset_reset: Any) -> str:
    if not isinstance(auto_offset_reset, str):
        raise TypeError(f"auto_offset_reset: expected a str, got {type(auto_offset_reset).__name__}")
    return auto_offset_reset


def next_offset(committed: int | None, begin: int | None, end: int | None, auto_offset_reset: str = "latest") -> int:
    """The offset the group would consume next (see the module docstring; the rule is the core's,
    ``rust/core/src/lag.rs``). Offsets are Kafka's int64 values."""
    return _core.next_offset(committed, begin, end, _check_reset(auto_offset_reset))


def compute_lag(committed: int | None, begin: int | None, end: int | None, auto_offset_reset: str = "latest") -> int:
    """Lag of one partition: ``max(end - next, 0)`` (the core's rule, ``rust/core/src/lag.rs``).

    >>> compute_lag(5555, 1111, 9999, "none")
    4444
    >>> compute_lag(None, 1111, 9999, "latest"), compute_lag(None, 1111, 9999, "earliest")
    (0, 8888)
    >>> compute_lag(100, 500, 1000)  # committed below the log start counts from the log start
    500
    """
    return _core.compute_lag(committed, begin, end, _check_reset(auto_offset_reset))


def compute_lags(
    partitions: Iterable[Key],
    committed: Mapping[Key, int | None],
    begin: Mapping[Key, int | None],
    end: Mapping[Key, int | None],
    auto_offset_reset: str = "latest",
) -> dict[Key, int]:
    """``{(topic, partition): lag}`` for ``partitions`` from three offset mappings.

    A partition missing from a mapping has no committed offset / beginning 0 / end 0.
    """
    _check_reset(auto_offset_reset)
    out: dict[Key, int] = {}
    for tp in partitions:
        key = (tp[0], tp[1])
        out[key] = compute_lag(committed.get(key), begin.get(key), end.get(key), auto_offset_reset)
    return out


@runtime_checkable
class LagProvider(Protocol):
    """Anything that can report lags for a list of partitions."""

    def lags(self, partitions: Iterable[Key]) -> dict[Key, int] | None:
        """``{(topic, partition): lag}`` for ``partitions``, or None when lags cannot be read."""
        ...


class StaticLagProvider:
    """Lags from a fixed mapping ``(topic, partition) -> lag``; unknown partitions have lag 0."""

    def __init__(self, mapping: Mapping[Key, int]) -> None:
        lags = check_lags(mapping, "mapping") if mapping is not None else None
        if lags is None:
            raise TypeError("mapping: expected a mapping of (topic, partition) to lag, got NoneType")
        self._lags = lags

    def lags(self, partitions: Iterable[Key]) -> dict[Key, int]:
        get = self._lags.get
        return {(tp[0], tp[1]): get((tp[0], tp[1]), 0) for tp in partitions}

    def __repr__(self) -> str:
        return f"StaticLagProvider({len(self._lags)} partitions)"


class KafkaLagProvider:
    """Lags of ``group_id`` read from a Kafka cluster (kafka-python admin client).

    Arguments:
        bootstrap_servers: the cluster, as for any kafka-python client.
        group_id: the consumer group whose committed offsets define the lag.
        timeout_s: the most one :meth:`lags` call may take, connection included. After it the call
            returns None (and logs a warning); the worker thread winds down on its own.
        auto_offset_reset: the group's ``auto.offset.reset``, used for partitions with no
            committed offset ("latest" = lag 0, anything else = all records in the log).
        **client_config: extra ``KafkaAdminClient`` settings (security, client id, ...).

    Each :meth:`lags` call opens its own short-lived admin client on a worker thread, reads the
    committed offsets (OffsetFetch) and the earliest and latest offsets (ListOffsets), and closes
    it. Nothing is shared with the consumer the assignor runs in.
    """

    def __init__(
        self,
        bootstrap_servers: Any,
        group_id: str,
        *,
        timeout_s: float = 5.0,
        auto_offset_reset: str = "latest",
        **client_config: Any,
    ) -> None:
        import importlib.util

        if importlib.util.find_spec("kafka") is None:
            raise ImportError("KafkaLagProvider needs kafka-python: pip install 'kassign[kafka-python]'")
        if not isinstance(group_id, str) or not group_id:
            raise ValueError(f"group_id: expected a non-empty str, got {group_id!r}")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
            raise ValueError(f"timeout_s: expected a positive number of seconds, got {timeout_s!r}")
        _check_reset(auto_offset_reset)
        self.bootstrap_servers = bootstrap_servers
        self.group_id = group_id
        self.timeout_s = float(timeout_s)
        self.auto_offset_reset = auto_offset_reset
        self.client_config = dict(client_config)

    def __repr__(self) -> str:
        return f"KafkaLagProvider({self.bootstrap_servers!r}, {self.group_id!r}, timeout_s={self.timeout_s})"

    def offsets(self, partitions: Iterable[Key]) -> tuple[dict[Key, int | None], dict[Key, int], dict[Key, int]]:
        """(committed, beginning, end) offsets of ``partitions``, read synchronously; raises on error.

        Committed offsets the group does not have are None. Runs on the calling thread and is
        bounded only by the client's own timeouts; :meth:`lags` is the guarded entry point.
        """
        from kafka import KafkaAdminClient
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.admin import OffsetSpec

        keys = list(dict.fromkeys((tp[0], tp[1]) for tp in partitions))
        if not keys:
            return {}, {}, {}
        timeout_ms = max(int(self.timeout_s * 1000), 1)
        config: dict[str, Any] = {
            "client_id": "kassign-lag",
            "request_timeout_ms": timeout_ms,
            "bootstrap_timeout_ms": timeout_ms,
        }
        config.update(self.client_config)
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers, **config)
        try:
            tps = [KafkaTopicPartition(t, p) for t, p in keys]
            fetched = admin.list_group_offsets({self.group_id: tps}).get(self.group_id, {})
            earliest = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in tps})
            latest = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in tps})
        finally:
            admin.close()
        committed: dict[Key, int | None] = {}
        for tp, om in fetched.items():
            off = getattr(om, "offset", om)
            committed[(tp.topic, tp.partition)] = off if isinstance(off, int) and off >= 0 else None
        begin = {(tp.topic, tp.partition): ot.offset for tp, ot in earliest.items()}
        end = {(tp.topic, tp.partition): ot.offset for tp, ot in latest.items()}
        return committed, begin, end

    def lags(self, partitions: Iterable[Key]) -> dict[Key, int] | None:
        """``{(topic, partition): lag}``, or None (with a warning) on error or timeout."""
        keys = [(tp[0], tp[1]) for tp in partitions]
        box: dict[str, Any] = {}
        # Import the client on the caller's thread: a worker abandoned after a timeout must not
        # go on importing (mutating sys.modules) while the caller iterates it; pytest's warning
        # capture did, and failed with "dictionary changed size during iteration".
        try:
            import kafka.admin  # noqa: F401
        except ImportError:
            pass  # the worker reports it, as any other failure

        def work() -> None:
            try:
                box["offsets"] = self.offsets(keys)
            except BaseException as e:  # reported to the caller's thread below
                box["error"] = e

        worker = threading.Thread(target=work, name="kassign-lag-fetch", daemon=True)
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            log.warning(
                "kassign: reading offsets of group %r from %s timed out after %.1f s; "
                "assigning by partition count only",
                self.group_id,
                self.bootstrap_servers,
                self.timeout_s,
            )
            return None
        if "error" in box:
            e = box["error"]
            log.warning(
                "kassign: cannot read offsets of group %r from %s (%s: %s); assigning by partition count only",
                self.group_id,
                self.bootstrap_servers,
                type(e).__name__,
                e,
            )
            return None
        committed, begin, end = box["offsets"]
        return compute_lags(keys, committed, begin, end, self.auto_offset_reset)
