"""The drop-in leader reads kafka-python's decoded objects as ``getattr`` does.

kafka-python's data containers keep their fields in ``__slots__`` behind a Python ``__getattr__``
(defaults for fields outside the decoded version); the Rust reader takes their slots through the
slot descriptors. The stand-ins (``support.slotted_members``, and the variants here) have the same
shape; these tests check each case where that shortcut must not apply or must fall back: an unset
slot (``__getattr__``'s default), an overridden ``__getattribute__``, a property instead of a slot,
and objects of several types in one group.
"""

from __future__ import annotations

from typing import Any

from support.slotted_members import DEFAULTS, Member, Owned, Subscription, read


class RackOverridden(Subscription):
    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name == "rack_id":
            return "from-getattribute"
        return object.__getattribute__(self, name)


class TopicsProperty:
    __slots__ = ("generation_id",)

    def __init__(self, generation_id: int) -> None:
        self.generation_id = generation_id

    @property
    def topics(self) -> list[str]:
        return ["from-property"]


def test_set_slots_are_read() -> None:
    sub = Subscription(
        topics=["a", "b"], user_data=None, owned_partitions=[Owned("a", [2, 0])], generation_id=4, rack_id="r1"
    )
    m = read([Member("m1", sub, "static-1")])["m1"]
    assert m.topics == ("a", "b")
    assert m.owned_partitions == (("a", 2), ("a", 0))
    assert (m.generation, m.rack, m.group_instance_id) == (4, "r1", "static-1")


def test_an_unset_slot_takes_getattr_default() -> None:
    sub = Subscription(topics=["a"], owned_partitions=[Owned("a", [1])])  # no generation, rack, user data
    DEFAULTS["generation_id"] = 9
    try:
        m = read([Member("m1", sub)])["m1"]
    finally:
        DEFAULTS["generation_id"] = -1
    assert m.generation == 9
    assert m.rack is None
    assert m.owned_partitions == (("a", 1),)


def test_an_overridden_getattribute_is_honoured() -> None:
    plain = Subscription(topics=["a"], rack_id="r1")
    overridden = RackOverridden(topics=["a"], rack_id="r1")
    out = read([Member("m1", plain), Member("m2", overridden), Member("m3", plain)])
    assert [out[m].rack for m in ("m1", "m2", "m3")] == ["r1", "from-getattribute", "r1"]


def test_a_property_is_read_as_getattr_reads_it() -> None:
    out = read([Member("m1", Subscription(topics=["a"])), Member("m2", TopicsProperty(5))])
    assert out["m1"].topics == ("a",)
    assert out["m2"].topics == ("from-property",)
    assert out["m2"].generation == 5
