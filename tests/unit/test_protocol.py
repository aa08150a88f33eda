"""kassign.protocol: consumer-protocol wire formats (docs/wire.md).

Expected bytes come from the spec's worked examples or from the small ``struct``-based spec
writer below (written from the field tables, independent of the Rust encoder).
"""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kassign
from kassign import protocol
from kassign.protocol import Assignment, ProtocolError, Subscription, TopicPartition

TP = TopicPartition


def h(s: str) -> bytes:
    return bytes.fromhex(s.replace("|", " "))


# The worked example of docs/wire.md.
WORKED = h(
    "00 03 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05 | "
    "00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01 | 00 00 00 05 | 00 02 72 31"
)
# docs/wire.md: assignment v3 and StickyAssignorUserData examples.
ASSIGNMENT_V3 = h("00 03 | 00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01 | ff ff ff ff")
STICKY_V1 = h("00 00 00 01 | 00 01 74 | 00 00 00 02 | 00 00 00 00 | 00 00 00 01 | 00 00 00 05")


# ------------------------------------------------------------------ independent spec writer


def _s(x: str | None) -> bytes:
    if x is None:
        return struct.pack(">h", -1)
    b = x.encode()
    return struct.pack(">h", len(b)) + b


def _b(x: bytes | None) -> bytes:
    return struct.pack(">i", -1) if x is None else struct.pack(">i", len(x)) + x


def _groups(groups: list[tuple[str, list[int]]]) -> bytes:
    out = struct.pack(">i", len(groups))
    for topic, parts in groups:
        out += _s(topic) + struct.pack(">i", len(parts)) + b"".join(struct.pack(">i", p) for p in parts)
    return out


def _sorted_groups(pairs) -> list[tuple[str, list[int]]]:
    groups: dict[str, list[int]] = {}
    for t, p in sorted(pairs):
        groups.setdefault(t, []).append(p)
    return list(groups.items())


def spec_subscription(version, topics, user_data, owned, generation, rack) -> bytes:
    out = struct.pack(">h", version) + struct.pack(">i", len(topics)) + b"".join(_s(t) for t in sorted(topics))
    out += _b(user_data)
    if version >= 1:
        out += _groups(_sorted_groups(owned))
    if version >= 2:
        out += struct.pack(">i", generation)
    if version >= 3:
        out += _s(rack)
    return out


# ------------------------------------------------------------------------ worked examples


def test_worked_example_encodes_to_the_spec_bytes():
    data = protocol.encode_subscription(
        ["t"], protocol.encode_generation(5), [("t", 1), TP("t", 0)], generation=5, rack="r1"
    )
    assert data == WORKED


def test_worked_example_decodes():
    sub = protocol.decode_subscription(WORKED)
    assert sub == Subscription(
        version=3,
        topics=("t",),
        user_data=b"\x00\x00\x00\x05",
        owned_partitions=(TP("t", 0), TP("t", 1)),
        generation=5,
        rack="r1",
    )
    assert all(type(tp) is TopicPartition for tp in sub.owned_partitions)
    assert protocol.decode_generation(sub.user_data) == 5


def test_decoded_classes_are_frozen():
    sub = protocol.decode_subscription(WORKED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sub.generation = 6  # type: ignore[misc]
    asg = protocol.decode_assignment(ASSIGNMENT_V3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        asg.partitions = ()  # type: ignore[misc]


def test_assignment_reference_vector():
    assert protocol.encode_assignment([("t", 0), ("t", 1)]) == ASSIGNMENT_V3
    assert protocol.decode_assignment(ASSIGNMENT_V3) == Assignment(3, (TP("t", 0), TP("t", 1)), None)


def test_assignment_is_grouped_by_first_appearance_not_sorted():
    data = protocol.encode_assignment([("b", 3), ("a", 1), ("b", 0)], user_data=b"\xab", version=0)
    assert data == h(
        "00 00 | 00 00 00 02 | 00 01 62 00 00 00 02 00 00 00 03 00 00 00 00 | "
        "00 01 61 00 00 00 01 00 00 00 01 | 00 00 00 01 ab"
    )
    assert protocol.decode_assignment(data).partitions == (TP("b", 3), TP("b", 0), TP("a", 1))


def test_sticky_user_data_reference_vectors():
    assert protocol.encode_sticky_user_data([("t", 1), ("t", 0)], generation=5) == STICKY_V1
    assert protocol.decode_sticky_user_data(STICKY_V1) == ([TP("t", 0), TP("t", 1)], 5)
    v0 = STICKY_V1[:-4]
    assert protocol.encode_sticky_user_data([("t", 0), ("t", 1)]) == v0
    assert protocol.decode_sticky_user_data(v0) == ([TP("t", 0), TP("t", 1)], None)
    # docs/wire.md: v0 + 00 00 00 09 + one byte reads as generation 9.
    assert protocol.decode_sticky_user_data(v0 + h("00 00 00 09 77")) == ([TP("t", 0), TP("t", 1)], 9)
    # Fewer than four extra bytes: v1 fails, v0 succeeds.
    assert protocol.decode_sticky_user_data(v0 + h("00 00 09"))[1] is None
    # Empty means no history.
    assert protocol.decode_sticky_user_data(b"") == ([], None)


def test_sticky_writer_sorts_by_topic():
    data = protocol.encode_sticky_user_data([("b", 0), ("a", 1)], generation=-1)
    assert data == h("00 00 00 02 | 00 01 61 00 00 00 01 00 00 00 01 | 00 01 62 00 00 00 01 00 00 00 00 | ff ff ff ff")


def test_cooperative_generation_user_data():
    assert protocol.encode_generation(-1) == h("ff ff ff ff")
    assert protocol.encode_generation(5) == h("00 00 00 05")
    assert protocol.decode_generation(h("ff ff ff ff")) == -1
    assert protocol.decode_generation(h("00 00 00 05 01")) == 5  # trailing bytes ignored
    with pytest.raises(ProtocolError):
        protocol.decode_generation(h("00 00 05"))


def test_failover_priority_user_data():
    assert protocol.encode_priority(10) == h("00 00 00 0a")
    assert protocol.encode_priority(-(2**31)) == h("80 00 00 00")
    assert protocol.decode_priority(h("00 00 00 0a")) == 10
    assert protocol.decode_priority(h("ff ff ff fe")) == -2
    assert protocol.decode_priority(None) is None
    assert protocol.decode_priority(b"") is None
    assert protocol.decode_priority(h("00 0a")) is None
    assert protocol.decode_priority(h("00 00 00 0a 00")) is None  # malformed: not exactly 4 bytes


# ------------------------------------------------------------------------------- versions


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (0, "00 00 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05"),
        (
            1,
            "00 01 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05 | "
            "00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01",
        ),
        (
            2,
            "00 02 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05 | "
            "00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01 | 00 00 00 05",
        ),
        (3, WORKED.hex()),
    ],
)
def test_older_versions_drop_newer_fields(version, expected):
    data = protocol.encode_subscription(["t"], h("00 00 00 05"), [("t", 0), ("t", 1)], 5, "r1", version=version)
    assert data == h(expected)
    sub = protocol.decode_subscription(data)
    assert sub.version == version
    assert sub.topics == ("t",)
    assert sub.user_data == h("00 00 00 05")
    assert sub.owned_partitions == (((TP("t", 0), TP("t", 1))) if version >= 1 else ())
    assert sub.generation == (5 if version >= 2 else -1)
    assert sub.rack == ("r1" if version >= 3 else None)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_versions_share_one_body(version):
    data = protocol.encode_assignment([("t", 0), ("t", 1)], version=version)
    assert data == struct.pack(">h", version) + ASSIGNMENT_V3[2:]
    assert protocol.decode_assignment(data).version == version


def test_version_5_with_trailing_bytes_decodes_as_v3():
    data = h("00 05") + WORKED[2:] + h("de ad be ef 00 01 02")
    sub = protocol.decode_subscription(data)
    assert sub.version == 5
    assert (sub.topics, sub.owned_partitions, sub.generation, sub.rack) == (("t",), (TP("t", 0), TP("t", 1)), 5, "r1")
    asg = protocol.decode_assignment(h("00 07") + ASSIGNMENT_V3[2:] + h("00 00 00 00 00 00"))
    assert asg == Assignment(7, (TP("t", 0), TP("t", 1)), None)


def test_trailing_bytes_ignored_for_known_versions_too():
    # Java's readers never check for leftover bytes; neither do ours (documented).
    v0 = h("00 00 | 00 00 00 01 00 01 74 | ff ff ff ff")
    assert protocol.decode_subscription(v0 + b"\x01\x02").topics == ("t",)


def test_null_user_data_and_rack_round_trip():
    data = protocol.encode_subscription(["a"])
    assert data == h("00 03 | 00 00 00 01 00 01 61 | ff ff ff ff | 00 00 00 00 | ff ff ff ff | ff ff")
    sub = protocol.decode_subscription(data)
    assert (sub.user_data, sub.owned_partitions, sub.generation, sub.rack) == (None, (), -1, None)


# --------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("n", range(len(WORKED)))
def test_every_truncation_is_a_protocol_error(n):
    with pytest.raises(ProtocolError):
        protocol.decode_subscription(WORKED[:n])


def test_truncation_error_names_offset_and_field():
    with pytest.raises(ProtocolError, match=r"byte 36.*generation_id"):
        protocol.decode_subscription(WORKED[:38])


def test_protocol_error_is_a_value_error_and_the_public_one():
    assert issubclass(ProtocolError, ValueError)
    assert ProtocolError is kassign.ProtocolError


@pytest.mark.parametrize(
    "data",
    [
        # Topics array of 2^31 - 1 in a 20-byte input.
        h("00 03 7f ff ff ff 00 01 74 00 00 00 00 00 00 00 00 00 00 00"),
        # Owned partitions array of 2^31 - 1.
        h("00 01 00 00 00 00 ff ff ff ff 7f ff ff ff 00 00 00 00 00 00"),
        # Partition array of 2^31 - 1 inside an owned-partition entry.
        h("00 01 00 00 00 00 ff ff ff ff 00 00 00 01 00 01 74 7f ff ff ff 00"),
        # user_data of 2^31 - 1 bytes.
        h("00 00 00 00 00 00 7f ff ff ff 00 00 00 00 00 00 00 00 00 00"),
        # 0x80000000 topics (a negative int32).
        h("00 03 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
    ],
)
def test_oversized_lengths_are_protocol_errors(data):
    with pytest.raises(ProtocolError):
        protocol.decode_subscription(data)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (h("00 00 ff ff ff ff"), "topics"),  # null topics array
        (h("00 00 ff ff ff fe"), "topics"),  # negative topics array
        (h("00 00 00 00 00 01 ff ff"), "topics"),  # null topic name
        (h("00 00 00 00 00 01 ff fe"), "topics"),  # negative topic-name length
        (h("00 00 00 00 00 00 ff ff ff fe"), "user_data"),  # -2 is not null
        (h("00 03 00 00 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff ff fe"), "rack_id"),
        (h("ff ff 00 00 00 00 ff ff ff ff"), "version"),  # negative version
        (h("00 00 00 00 00 01 00 02 c3 28 ff ff ff ff"), "topics"),  # invalid UTF-8
    ],
)
def test_negative_null_and_invalid_fields_are_protocol_errors(data, field):
    with pytest.raises(ProtocolError, match=field):
        protocol.decode_subscription(data)


def test_assignment_and_sticky_errors():
    with pytest.raises(ProtocolError):
        protocol.decode_assignment(h("00 00 00 00 00 01 00 01 74 ff ff ff ff"))  # null partitions
    with pytest.raises(ProtocolError):
        protocol.decode_assignment(h("00 00 7f ff ff ff 00 00 00 00 00 00 00 00"))
    with pytest.raises(ProtocolError):
        protocol.decode_sticky_user_data(h("7f ff ff ff 00 01 74 00 00 00 00 00 00 00 00 00 00 00 00 00"))
    with pytest.raises(ProtocolError):
        protocol.decode_sticky_user_data(h("00 00 00 01 00 01"))


@pytest.mark.parametrize(
    "fn",
    [
        protocol.decode_subscription,
        protocol.decode_assignment,
        protocol.decode_sticky_user_data,
        protocol.decode_generation,
        protocol.decode_priority,
    ],
)
def test_decoders_reject_str_naming_the_argument(fn):
    with pytest.raises(TypeError, match="data"):
        fn("00 03")
    with pytest.raises(TypeError, match="data"):
        fn(123)


def test_decoders_accept_bytearray_and_memoryview():
    assert protocol.decode_subscription(bytearray(WORKED)).rack == "r1"
    assert protocol.decode_subscription(memoryview(WORKED)).rack == "r1"
    assert protocol.decode_assignment(memoryview(b"xx" + ASSIGNMENT_V3)[2:]).version == 3


def test_encoder_argument_errors_name_the_argument():
    with pytest.raises(TypeError, match="topics"):
        protocol.encode_subscription("t")
    with pytest.raises(TypeError, match="user_data"):
        protocol.encode_subscription(["t"], user_data="x")
    with pytest.raises(TypeError, match="owned_partitions"):
        protocol.encode_subscription(["t"], owned_partitions=[("t", "0")])
    with pytest.raises(ValueError, match="owned_partitions"):
        protocol.encode_subscription(["t"], owned_partitions=[("t", 2**31)])
    with pytest.raises(ValueError, match="generation"):
        protocol.encode_subscription(["t"], generation=2**31)
    with pytest.raises(TypeError, match="rack"):
        protocol.encode_subscription(["t"], rack=b"r")
    with pytest.raises(ValueError, match="version"):
        protocol.encode_subscription(["t"], version=4)
    with pytest.raises(ValueError, match="version"):
        protocol.encode_assignment([], version=-1)
    with pytest.raises(ValueError, match="topics"):
        protocol.encode_subscription(["x" * 32768])
    with pytest.raises(TypeError, match="partitions"):
        protocol.encode_sticky_user_data([("t", 0.5)])
    with pytest.raises(ValueError, match="priority"):
        protocol.encode_priority(2**31)
    # The longest legal string is fine.
    assert protocol.decode_subscription(protocol.encode_subscription(["x" * 32767])).topics == ("x" * 32767,)


# ----------------------------------------------------------------------------- properties

topics_st = st.text(min_size=0, max_size=8)
int32 = st.integers(-(2**31), 2**31 - 1)
pairs_st = st.lists(st.tuples(st.sampled_from(["a", "b", "t", "é", ""]) | topics_st, int32), max_size=8)
user_data_st = st.none() | st.binary(max_size=16)


@given(
    version=st.integers(0, 3),
    topics=st.lists(topics_st, max_size=6),
    user_data=user_data_st,
    owned=pairs_st,
    generation=int32,
    rack=st.none() | topics_st,
)
def test_subscription_round_trip(version, topics, user_data, owned, generation, rack):
    data = protocol.encode_subscription(topics, user_data, owned, generation, rack, version)
    assert data == spec_subscription(version, topics, user_data, owned, generation, rack)
    sub = protocol.decode_subscription(data)
    assert sub.version == version
    assert sub.topics == tuple(sorted(topics))
    assert sub.user_data == user_data
    assert sub.owned_partitions == (tuple(TP(t, p) for t, p in sorted(owned)) if version >= 1 else ())
    assert sub.generation == (generation if version >= 2 else -1)
    assert sub.rack == (rack if version >= 3 else None)


@given(version=st.integers(0, 3), parts=pairs_st, user_data=user_data_st)
def test_assignment_round_trip(version, parts, user_data):
    data = protocol.encode_assignment(parts, user_data, version)
    groups: dict[str, list[int]] = {}
    for t, p in parts:
        groups.setdefault(t, []).append(p)
    assert data == struct.pack(">h", version) + _groups(list(groups.items())) + _b(user_data)
    asg = protocol.decode_assignment(data)
    assert asg.version == version
    assert asg.partitions == tuple(TP(t, p) for t, ps in groups.items() for p in ps)
    assert asg.user_data == user_data


@given(parts=pairs_st, generation=st.none() | int32)
def test_sticky_round_trip(parts, generation):
    data = protocol.encode_sticky_user_data(parts, generation)
    tail = b"" if generation is None else struct.pack(">i", generation)
    assert data == _groups(_sorted_groups(parts)) + tail
    assert protocol.decode_sticky_user_data(data) == ([TP(t, p) for t, p in sorted(parts)], generation)


def _random_inputs():
    # Raw noise, plus valid messages with bytes flipped, cut or appended (reaches deeper fields).
    valid = st.sampled_from([WORKED, ASSIGNMENT_V3, STICKY_V1, h("00 00 00 05")])
    mutated = st.tuples(valid, st.integers(0, 60), st.integers(0, 255), st.binary(max_size=8)).map(
        lambda a: a[0][: a[1] % (len(a[0]) + 1)] + bytes([a[2]]) + a[0][a[1] % (len(a[0]) + 1) + 1 :] + a[3]
    )
    return st.binary(max_size=64) | mutated


@given(data=_random_inputs())
def test_decoders_raise_only_protocol_error(data):
    for fn in (
        protocol.decode_subscription,
        protocol.decode_assignment,
        protocol.decode_sticky_user_data,
        protocol.decode_generation,
    ):
        try:
            fn(data)
        except ProtocolError:
            pass
    assert protocol.decode_priority(data) == (struct.unpack(">i", data)[0] if len(data) == 4 else None)
