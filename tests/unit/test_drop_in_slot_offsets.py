"""The drop-in leader reads a ``__slots__`` field at the offset its member descriptor names, once
that offset is confirmed for the object's type; these check that every object still gets its own
values, whatever order types, set and unset slots come in."""

from __future__ import annotations

from typing import Any

from support.slotted_members import Member, Owned, Subscription, read


class Shifted:
    """The same fields after other slots: a different type, each field at another offset."""

    __slots__ = ("a", "b", "c", "generation_id", "owned_partitions", "rack_id", "topics", "user_data")

    def __init__(self, **fields: Any) -> None:
        self.a, self.b, self.c = "x", "y", "z"
        for name, value in fields.items():
            setattr(self, name, value)


def test_a_first_object_with_unset_slots_does_not_hide_later_values() -> None:
    first = Subscription(topics=["a"])  # no rack, generation or owned field
    later = Subscription(topics=["b"], rack_id="r2", generation_id=7, owned_partitions=[Owned("b", [3])])
    out = read([Member("m1", first), Member("m2", later), Member("m3", first)])
    assert (out["m1"].rack, out["m1"].generation, out["m1"].owned_partitions) == (None, -1, ())
    assert (out["m2"].rack, out["m2"].generation, out["m2"].owned_partitions) == ("r2", 7, (("b", 3),))
    assert out["m3"].topics == ("a",) and out["m3"].rack is None


def test_types_with_other_offsets_alternate() -> None:
    subs: list[Any] = []
    for i in range(6):
        cls = Shifted if i % 2 else Subscription
        subs.append(cls(topics=[f"t{i}"], rack_id=f"r{i}", generation_id=i, owned_partitions=[Owned(f"t{i}", [i])]))
    members = [Member(f"m{i}", s, f"static-{i}" if i % 3 else None) for i, s in enumerate(subs)]
    out = read(members)
    for i in range(6):
        m = out[f"m{i}"]
        assert m.topics == (f"t{i}",)
        assert (m.rack, m.generation) == (f"r{i}", i)
        assert m.owned_partitions == ((f"t{i}", i),)
        assert m.group_instance_id == (f"static-{i}" if i % 3 else None)
