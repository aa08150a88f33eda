"""Stand-ins for kafka-python's decoded group members, for the tests of the drop-in reader's
``__slots__`` shortcut (``tests/unit/test_drop_in_*``).

kafka-python's data containers keep their fields in ``__slots__`` behind a Python ``__getattr__``
that answers defaults for fields outside the decoded version; these have the same shape.
"""

from __future__ import annotations

from typing import Any

from kassign import _core

# What ``Subscription.__getattr__`` answers for an unset slot (kafka-python's defaults). A test may
# change an entry to see that the reader asks ``__getattr__``; it must put it back.
DEFAULTS: dict[str, Any] = {"owned_partitions": [], "generation_id": -1, "rack_id": None, "user_data": None}


class Member:
    __slots__ = ("group_instance_id", "member_id", "metadata")

    def __init__(self, member_id: str, metadata: Any, group_instance_id: str | None = None) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.metadata = metadata


class Owned:
    __slots__ = ("partitions", "topic")

    def __init__(self, topic: str, partitions: list[int]) -> None:
        self.topic = topic
        self.partitions = partitions


class Subscription:
    """Slots, and a ``__getattr__`` for the unset ones (as kafka-python's DataContainer)."""

    __slots__ = ("generation_id", "owned_partitions", "rack_id", "topics", "user_data")

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if name in DEFAULTS:
            return DEFAULTS[name]
        raise AttributeError(name)


def read(members: list[Member]) -> dict[str, Any]:
    """The reader's view of ``members`` (kafka-python, cooperative-sticky); it must warn of nothing."""
    warnings: list[str] = []
    out: dict[str, Any] = _core.drop_in_members("cooperative-sticky", "kafka-python", members, warnings.append)
    assert warnings == []
    return out
