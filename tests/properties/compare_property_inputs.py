"""Check that two versions of tests/properties/test_properties.py generate the same inputs.

Usage: python tests/properties/compare_property_inputs.py OLD_REV [--examples N] [--seed S] [-k NAME]

Loads tests/properties/test_properties.py as of git revision OLD_REV and the working tree's version, runs
every property test of both (every parametrization) under the same hypothesis seed with N
examples each (no example database), records every input handed to ``kassign.assign``
(members with all their fields, topics, options) and requires the two recordings to be identical.
Used when a generator is rewritten for speed but must keep its input distribution.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

from hypothesis import settings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # test_properties, tests/ (support)


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def canon(members, topics, kw):
    ms = tuple(
        (
            m,
            tuple(x.topics),
            tuple((tp[0], tp[1]) for tp in x.owned_partitions),
            x.generation,
            x.group_instance_id,
            x.user_data,
            x.rack,
        )
        for m, x in members.items()
    )
    opts = tuple(sorted((k, repr(sorted(v.items())) if isinstance(v, dict) else repr(v)) for k, v in kw.items()))
    return ms, tuple(topics.items()), opts


def record(mod, examples: int, seed: int, only: str | None):
    out = {}
    calls: list = []
    real = mod.assign

    def spy(strategy, members, topics, **kw):
        calls.append(canon(members, topics, kw))
        return real(strategy, members, topics, **kw)

    mod.assign = spy
    for name in sorted(dir(mod)):
        fn = getattr(mod, name)
        if not (name.startswith("test_") and hasattr(fn, "hypothesis")):
            continue
        if only and only not in name:
            continue
        fn._hypothesis_internal_use_settings = settings(
            fn._hypothesis_internal_use_settings, max_examples=examples, database=None
        )
        fn._hypothesis_internal_use_seed = seed
        params = mod.STICKY_PRESENT if "sticky" in name or "racks" in name else mod.STRATEGIES
        for strategy in params:
            calls.clear()
            fn(strategy=strategy)
            out[f"{name}[{strategy}]"] = list(calls)
    mod.assign = real
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("old_rev")
    ap.add_argument("--examples", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-k", dest="only", default=None, help="only test functions whose name contains this")
    a = ap.parse_args()
    src = subprocess.run(
        ["git", "show", f"{a.old_rev}:tests/properties/test_properties.py"],
        cwd=HERE,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.TemporaryDirectory() as d:
        old_path = os.path.join(d, "test_properties_old.py")
        with open(old_path, "w") as f:
            f.write(src)
        old = record(load(old_path, "test_properties_old"), a.examples, a.seed, a.only)
    new = record(load(os.path.join(HERE, "test_properties.py"), "test_properties_new"), a.examples, a.seed, a.only)
    bad = 0
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key), new.get(key)
        same = o == n
        bad += not same
        print(f"{key}: {len(o or [])} / {len(n or [])} assign calls, {'identical' if same else 'DIFFERENT'}")
    print(f"{len(old)} tests, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
