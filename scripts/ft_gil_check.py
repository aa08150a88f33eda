"""The free-threaded wheel's import contract (docs/interpreters.md, "Free-threaded CPython"),
run by scripts/ft-wheel in a fresh process of a free-threaded CPython 3.14, with an installed
kassign and nothing of the source tree on the path.

    python ft_gil_check.py gil-on      # the GIL is off at start; importing kassign turns it on,
                                       # with a RuntimeWarning naming kassign._core
    python ft_gil_check.py gil-forced-off   # under PYTHON_GIL=0: the GIL stays off, no warning

Either way, a TopicPartition that kassign returns hashes as the equal plain tuple and results
are those of the rule (range over two members). Exits non-zero with a message otherwise.
"""

from __future__ import annotations

import sys
import sysconfig
import warnings


def main(mode: str) -> None:
    assert sysconfig.get_config_var("Py_GIL_DISABLED") == 1, "not a free-threaded build"
    gil_before = sys._is_gil_enabled()
    assert not gil_before, "the GIL is on before kassign is imported"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import kassign
    gil_warnings = [w for w in caught if issubclass(w.category, RuntimeWarning) and "GIL" in str(w.message)]
    gil_after = sys._is_gil_enabled()
    if mode == "gil-on":
        assert gil_after, "importing kassign left the GIL off (gil_used = true should turn it on)"
        assert len(gil_warnings) == 1, [str(w.message) for w in caught]
        assert "kassign._core" in str(gil_warnings[0].message), str(gil_warnings[0].message)
    elif mode == "gil-forced-off":
        assert not gil_after, "PYTHON_GIL=0 should keep the GIL off"
        assert not gil_warnings, [str(w.message) for w in gil_warnings]
    else:
        raise SystemExit(f"unknown mode {mode!r} (gil-on or gil-forced-off)")

    members = {"c1": kassign.Member(["orders"]), "c2": kassign.Member(["orders"])}
    result = kassign.assign("range", members, {"orders": 4})
    assert [tuple(tp) for tp in result["c1"]] == [("orders", 0), ("orders", 1)], result
    assert [tuple(tp) for tp in result["c2"]] == [("orders", 2), ("orders", 3)], result
    for tps in result.values():
        for tp in tps:
            assert hash(tp) == hash(tuple(tp)), (tp, hash(tp), hash(tuple(tp)))
    assert ("orders", 0) in set(result["c1"])
    print(
        f"ft-gil-check: {mode}: CPython {sys.version.split()[0]} free-threaded, GIL before import "
        f"{gil_before}, after {gil_after}, {len(gil_warnings)} RuntimeWarning(s); kassign {kassign.__version__} "
        f"from {kassign.__file__}"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gil-on")
