"""The JSON scenario format shared by the CLI, the benchmarks and the peer harnesses.

A scenario is a JSON object::

    {"topics": {"t": 3},
     "members": {"c1": {"topics": ["t"], "owned": [["t", 0]], "generation": 1, "rack": "a",
                        "group_instance_id": null, "user_data_hex": "0000000a"}},
     "lags": [["t", 0, 100]],
     "partition_racks": [["t", 0, ["a", "b"]]],
     "options": {"mode": "global"}}

Only ``topics`` and ``members`` are required; every member field but ``topics`` is optional.
An assignment is written as ``{"c1": [["t", 0]], ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._types import Member, TopicPartition


class ScenarioError(ValueError):
    """A scenario document is malformed; the message says where."""


@dataclass
class Scenario:
    members: dict[str, Member]
    partitions_per_topic: dict[str, int]
    lags: dict[tuple[str, int], int] | None = None
    partition_racks: dict[tuple[str, int], list[str]] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def assign(self, strategy: str) -> dict[str, list[TopicPartition]]:
        from . import assign

        return assign(
            strategy,
            self.members,
            self.partitions_per_topic,
            lags=self.lags,
            partition_racks=self.partition_racks,
            **self.options,
        )

    def to_json(self) -> dict[str, Any]:
        members = {}
        for mid, m in self.members.items():
            d: dict[str, Any] = {"topics": list(m.topics)}
            if m.owned_partitions:
                d["owned"] = [[tp.topic, tp.partition] for tp in m.owned_partitions]
            if m.generation != -1:
                d["generation"] = m.generation
            if m.rack is not None:
                d["rack"] = m.rack
            if m.group_instance_id is not None:
                d["group_instance_id"] = m.group_instance_id
            if m.user_data is not None:
                d["user_data_hex"] = m.user_data.hex()
            members[mid] = d
        doc: dict[str, Any] = {"topics": dict(self.partitions_per_topic), "members": members}
        if self.lags is not None:
            doc["lags"] = [[t, p, lag] for (t, p), lag in self.lags.items()]
        if self.partition_racks is not None:
            doc["partition_racks"] = [[t, p, list(r)] for (t, p), r in self.partition_racks.items()]
        if self.options:
            doc["options"] = dict(self.options)
        return doc


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers keys it saw more than once (``json`` keeps the last
    silently; a scenario with two members or topics of the same name is an error instead)."""

    duplicates: list[str]


def _object_pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    obj.duplicates = []
    for k, v in pairs:
        if k in obj and k not in obj.duplicates:
            obj.duplicates.append(k)
        obj[k] = v
    return obj


def _no_duplicates(obj: Any, where: str) -> None:
    dups = getattr(obj, "duplicates", None)
    _expect(not dups, where, f"duplicate keys {dups!r}")


def _expect(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ScenarioError(f"{where}: {what}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_scenario(doc: Any) -> Scenario:
    """Validate a decoded JSON scenario and build kassign inputs from it."""
    _expect(isinstance(doc, Mapping), "scenario", "expected a JSON object")
    _no_duplicates(doc, "scenario")
    _expect("topics" in doc, "scenario", "missing required key 'topics'")
    _expect("members" in doc, "scenario", "missing required key 'members'")
    unknown = set(doc) - {"topics", "members", "lags", "partition_racks", "options"}
    _expect(not unknown, "scenario", f"unknown keys {sorted(unknown)}")
    topics = doc["topics"]
    _expect(isinstance(topics, Mapping), "topics", "expected an object of topic -> partition count")
    _no_duplicates(topics, "topics")
    for t, n in topics.items():
        _expect(_is_int(n) and n >= 0, f"topics.{t}", f"expected a non-negative integer, got {n!r}")
    members_doc = doc["members"]
    _expect(isinstance(members_doc, Mapping), "members", "expected an object of member id -> member")
    _no_duplicates(members_doc, "members")
    members: dict[str, Member] = {}
    for mid, m in members_doc.items():
        where = f"members.{mid}"
        _expect(isinstance(m, Mapping), where, "expected an object")
        _no_duplicates(m, where)
        bad = set(m) - {"topics", "owned", "generation", "rack", "group_instance_id", "user_data_hex"}
        _expect(not bad, where, f"unknown keys {sorted(bad)}")
        _expect("topics" in m, where, "missing required key 'topics'")
        _expect(
            isinstance(m["topics"], list) and all(isinstance(t, str) for t in m["topics"]),
            f"{where}.topics",
            "expected a list of topic names",
        )
        owned = m.get("owned", [])
        _expect(isinstance(owned, list), f"{where}.owned", "expected a list of [topic, partition] pairs")
        for pair in owned:
            _expect(
                isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and _is_int(pair[1]),
                f"{where}.owned",
                f"expected [topic, partition] pairs, got {pair!r}",
            )
        gen = m.get("generation", -1)
        _expect(_is_int(gen) and -(2**31) <= gen < 2**31, f"{where}.generation", f"expected an int32, got {gen!r}")
        rack = m.get("rack")
        _expect(rack is None or isinstance(rack, str), f"{where}.rack", "expected a string or null")
        gid = m.get("group_instance_id")
        _expect(gid is None or isinstance(gid, str), f"{where}.group_instance_id", "expected a string or null")
        ud_hex = m.get("user_data_hex")
        user_data = None
        if ud_hex is not None:
            _expect(isinstance(ud_hex, str), f"{where}.user_data_hex", "expected a hex string")
            try:
                user_data = bytes.fromhex(ud_hex)
            except ValueError:
                raise ScenarioError(f"{where}.user_data_hex: not valid hex") from None
        members[mid] = Member(
            m["topics"],
            [TopicPartition(t, p) for t, p in owned],
            generation=gen,
            rack=rack,
            group_instance_id=gid,
            user_data=user_data,
        )
    lags = None
    if doc.get("lags") is not None:
        _expect(isinstance(doc["lags"], list), "lags", "expected a list of [topic, partition, lag]")
        lags = {}
        for row in doc["lags"]:
            _expect(
                isinstance(row, list)
                and len(row) == 3
                and isinstance(row[0], str)
                and _is_int(row[1])
                and _is_int(row[2])
                and row[2] >= 0,
                "lags",
                f"expected [topic, partition, lag >= 0], got {row!r}",
            )
            lags[(row[0], row[1])] = row[2]
    racks = None
    if doc.get("partition_racks") is not None:
        _expect(isinstance(doc["partition_racks"], list), "partition_racks", "expected a list")
        racks = {}
        for row in doc["partition_racks"]:
            _expect(
                isinstance(row, list)
                and len(row) == 3
                and isinstance(row[0], str)
                and _is_int(row[1])
                and isinstance(row[2], list)
                and all(isinstance(r, str) for r in row[2]),
                "partition_racks",
                f"expected [topic, partition, [racks]], got {row!r}",
            )
            racks[(row[0], row[1])] = list(row[2])
    options = doc.get("options") or {}
    _expect(isinstance(options, Mapping), "options", "expected an object")
    _no_duplicates(options, "options")
    return Scenario(members, dict(topics), lags, racks, dict(options))


def load_scenario(text: str) -> Scenario:
    """Parse scenario JSON text; malformed JSON is a :class:`ScenarioError`."""
    try:
        doc = json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"malformed JSON: {e}") from None
    return parse_scenario(doc)


def assignment_to_json(assignment: Mapping[str, list[TopicPartition]]) -> dict[str, list[list[Any]]]:
    return {mid: [[tp[0], tp[1]] for tp in tps] for mid, tps in assignment.items()}
