"""Each kind of core error raises its own class, all under kassign.KassignError, and is still
caught as the builtin it was before (ValueError, RuntimeError): no caller's ``except`` breaks."""

from __future__ import annotations

import pytest

import kassign
from kassign import Member, protocol


def input_error_cap():
    kassign.assign("range", {"a": Member(["t"])}, {"t": kassign._MAX_PARTITIONS + 1})


def input_error_negative():
    kassign.assign("range", {"a": Member(["t"])}, {"t": -1})


def input_error_wire():
    protocol.assign_wire("range", {"a": protocol.encode_subscription(["t"])}, {"t": 2**31})


def protocol_error():
    protocol.decode_subscription(b"\x00\x01\xff")


def encode_error():
    protocol.encode_subscription(["x" * 40_000])


def internal_error():
    kassign._core._trigger_panic()


CASES = [
    (input_error_cap, kassign.InputError, ValueError, "exceeds the supported maximum"),
    (input_error_negative, kassign.InputError, ValueError, "must be >= 0"),
    (input_error_wire, kassign.InputError, ValueError, "exceeds the int32 range"),
    (protocol_error, kassign.ProtocolError, ValueError, "truncated input"),
    (encode_error, kassign.EncodeError, ValueError, "32767-byte limit"),
    (internal_error, kassign.InternalError, RuntimeError, "panicked"),
]


@pytest.mark.parametrize(("call", "cls", "builtin", "message"), CASES, ids=[c[0].__name__ for c in CASES])
def test_each_kind_raises_its_class_and_its_builtin(call, cls, builtin, message):
    with pytest.raises(cls, match=message) as info:
        call()
    assert type(info.value) is cls
    assert isinstance(info.value, kassign.KassignError)
    with pytest.raises(builtin):  # what callers caught before
        call()


def test_the_classes_are_distinct_and_share_one_base():
    classes = {kassign.InputError, kassign.ProtocolError, kassign.EncodeError, kassign.InternalError}
    assert len(classes) == 4
    for cls in classes:
        assert issubclass(cls, kassign.KassignError) and cls.__module__ == "kassign"
    assert issubclass(kassign.InternalError, RuntimeError) and not issubclass(kassign.InternalError, ValueError)
    assert kassign._core.InputError is kassign.InputError


def test_python_checks_keep_their_builtin_types():
    with pytest.raises(TypeError):
        kassign.assign(1, {"a": Member(["t"])}, {"t": 1})  # type: ignore[arg-type]
