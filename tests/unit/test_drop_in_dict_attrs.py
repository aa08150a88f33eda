"""The drop-in leader reads aiokafka's struct fields from the instance dict when no class on the
type's MRO has an attribute of that name (``rust/python/src/slot_attr.rs``): each object must still
give what ``getattr`` gives, whatever mix of types, missing entries and class attributes."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from kassign import _core


class Plain:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class WithDefaults(Plain):
    def __getattr__(self, name: str) -> Any:  # missing entries: a default, as getattr gives
        return {"subscription": ["fallback"], "user_data": b"default"}[name]


class ClassAttribute(Plain):
    user_data = b"class"  # on the MRO: getattr gives the instance entry when there is one


class OddDict(dict):  # type: ignore[type-arg]
    def __getitem__(self, key: Any) -> Any:  # getattr does not call it; neither may the read
        return ["never"]


def read(members: dict[str, Any]) -> dict[str, tuple[tuple[str, ...], Any]]:
    warnings: list[str] = []
    out = _core.drop_in_members("range", "aiokafka", members, warnings.append)
    assert warnings == []
    return {mid: (m.topics, m.user_data) for mid, m in out.items()}


def expected(members: dict[str, Any]) -> dict[str, tuple[tuple[str, ...], Any]]:
    out = {}
    for mid, md in members.items():
        topics = getattr(md, "subscription", None) or []
        user_data = getattr(md, "user_data", None)
        out[mid] = (tuple(sorted(set(topics))), user_data)
    return out


def test_instance_dict_entries_are_read_per_object() -> None:
    members = {f"m{i}": Plain(subscription=[f"t{i}"], user_data=bytes([i])) for i in range(5)}
    assert read(members) == expected(members)
    assert read(members)["m3"] == (("t3",), b"\x03")


def test_a_missing_entry_takes_getattr() -> None:
    members = {
        "a": WithDefaults(subscription=["t1"]),  # no user_data entry: __getattr__'s default
        "b": WithDefaults(subscription=["t2"], user_data=b"own"),
        "c": WithDefaults(user_data=b"x"),  # no subscription entry
    }
    assert read(members) == expected(members)
    assert read(members)["a"][1] == b"default" and read(members)["c"][0] == ("fallback",)


def test_types_alternate_and_class_attributes_are_honoured() -> None:
    members: dict[str, Any] = {}
    for i in range(6):
        cls = (Plain, ClassAttribute, WithDefaults)[i % 3]
        members[f"m{i}"] = cls(subscription=[f"t{i}"], **({"user_data": bytes([i])} if i % 2 else {}))
    members["m6"] = Plain(subscription=["t6"], user_data=None)
    assert read(members) == expected(members)
    assert read(members)["m4"][1] == b"class"


@pytest.mark.skipif(
    sys.implementation.name != "cpython",
    reason="CPython's getattr reads a dict subclass's entries without its __getitem__; PyPy's calls it",
)
def test_a_dict_subclass_as_instance_dict_is_read_as_getattr_reads_it() -> None:
    odd = Plain()
    odd.__dict__ = OddDict(subscription=["t9"], user_data=b"9")
    members = {"a": Plain(subscription=["t1"], user_data=b"1"), "b": odd}
    assert read(members) == expected(members)
    assert read(members)["b"] == (("t9",), b"9")
