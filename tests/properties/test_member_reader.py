"""``kassign._core.assign`` reads ``kassign.Member`` objects through the core's member reader
(rust/core/src/members.rs): on random groups, good and bad, it answers as the reader the binding
had before (``_core.assign_previous_reader``): the same result in the same order, or the same
exception type and message.

Bad input covered: member ids that repeat (a mapping whose ``items()`` repeats a key), ids and
values of the wrong type, names that are not UTF-8 (lone surrogates), negative and out-of-range
partitions, unknown topics, negative and oversized partition counts, repeated and unknown
subscribed topics.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given
from hypothesis import strategies as st

from kassign import Member, TopicPartition, _core

TOPICS = ["a", "b", "c", "topic-3"]
#: Names a member may give besides the group's topics: unknown, a str subclass, a lone surrogate.
EXTRA = ["zz", "\udc80"]
STRATEGIES = sorted(_core.rust_strategies())


class Name(str):
    """A ``str`` subclass: not interned, compared by content."""


class Entries(Mapping):
    """A mapping whose ``items()`` gives the entries as listed, a key possibly more than once."""

    def __init__(self, entries):
        self.entries = entries

    def __getitem__(self, key):
        for k, v in reversed(self.entries):
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self):
        return iter([k for k, _ in self.entries])

    def __len__(self):
        return len(self.entries)

    def items(self):
        return list(self.entries)


def rarely(draw, common, rare, one_in=20):
    """One of ``common``, or once in ``one_in`` draws one of ``rare``."""
    return draw(st.sampled_from(rare if draw(st.integers(1, one_in)) == 1 else common))


def topic_name(draw, known):
    name = rarely(draw, known + ["zz"], ["\udc80"], 40)
    return Name(name) if draw(st.integers(0, 4)) == 0 else name


@st.composite
def members(draw, known):
    subscribed = [draw(st.sampled_from(known + ["zz"])) for _ in range(draw(st.integers(0, 4)))]
    if draw(st.integers(0, 5)) == 0:
        subscribed = [Name(t) for t in subscribed]
    owned = []
    for _ in range(draw(st.integers(0, 6))):
        t = topic_name(draw, known)
        if draw(st.booleans()):
            owned.append((t, draw(st.integers(-3, 8))))
        else:
            owned.append((t, [draw(st.integers(-3, 8)) for _ in range(draw(st.integers(0, 3)))]))
    rack = rarely(draw, [None, "", "r1", "r2"], ["\udc80"])
    instance = rarely(draw, [None, "g1"], ["\udc81"])
    return Member(
        subscribed,
        owned_partitions=owned,
        generation=draw(st.integers(-1, 3)),
        rack=rack,
        group_instance_id=instance,
    )


@st.composite
def groups(draw):
    known = TOPICS[: draw(st.integers(1, len(TOPICS)))]
    counts = {t: draw(st.integers(0, 6)) for t in known}
    if draw(st.integers(1, 10)) == 1:
        counts[draw(st.sampled_from(known))] = draw(st.sampled_from([-1, 2**31, "3", True]))
    entries = []
    shared = draw(members(known))
    for _ in range(draw(st.integers(0, 7))):
        mid = rarely(draw, ["m0", "m1", "m2", "m3", "m4", "m5", ""], [1, None, b"m0", "\udc80"], 40)
        value = shared if draw(st.booleans()) else draw(members(known))
        if draw(st.integers(1, 40)) == 1:
            value = draw(st.sampled_from([None, 1, "m", ("a",)]))
        entries.append((mid, value))
    if draw(st.integers(1, 4)) > 1:
        group = {}
        for mid, value in entries:
            group[mid] = value
    else:
        group = Entries(entries)
    return draw(st.sampled_from(STRATEGIES)), group, counts


def outcome(fn, strategy, group, counts):
    try:
        result = fn(strategy, group, counts, None, TopicPartition)
    except Exception as e:  # the comparison is of the exception's type and message
        return ("raised", type(e), str(e))
    return ("result", [(mid, [tuple(tp) for tp in tps]) for mid, tps in result.items()])


@given(groups())
def test_member_reader_answers_as_the_previous_reader(case):
    strategy, group, counts = case
    assert outcome(_core.assign, strategy, group, counts) == outcome(
        _core.assign_previous_reader, strategy, group, counts
    )
