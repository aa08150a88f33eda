"""The previous implementation of the Python boundary, built from git, as a reference.

``kassign`` 0.1's boundary (commit :data:`LEGACY_COMMIT`: Python-side checks and columns, the
old ``_core.assign``, the adapters' decode-then-assign leader path) is built from the
repository's own history into ``.cache/legacy-<commit>/`` (once; reused afterwards) and driven in
a subprocess by :data:`RUNNER`, so the new boundary can be compared with it on random inputs:
assignments, bytes and errors (tests/test_boundary_equivalence.py).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LEGACY_COMMIT = "17a3e9a"
CACHE = REPO / ".cache" / f"legacy-{LEGACY_COMMIT}"


def build() -> Path:
    """Build and install the legacy package; returns the directory to put on PYTHONPATH."""
    site = CACHE / "site"
    if (site / "kassign" / "__init__.py").exists():
        return site
    src = CACHE / "src"
    shutil.rmtree(CACHE, ignore_errors=True)
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", LEGACY_COMMIT], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src, filter="data")
    maturin = Path(sys.executable).with_name("maturin")
    env = dict(os.environ, CARGO_TARGET_DIR=str(CACHE / "target"))
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(
        [str(maturin), "build", "--release", "--quiet", "-o", str(CACHE / "dist"), "-i", sys.executable],
        cwd=src,
        env=env,
        check=True,
    )
    wheel = next((CACHE / "dist").glob("kassign-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)], check=True
    )
    shutil.rmtree(CACHE / "target", ignore_errors=True)
    return site


#: Runs in the legacy interpreter: reads one JSON list of cases on stdin, writes one JSON list of
#: outcomes ({"ok": ...} or {"error": [type name, message]}).
RUNNER = r"""
import json, sys, logging
logging.disable(logging.CRITICAL)
import kassign
assert kassign.__file__.startswith(sys.argv[1]), kassign.__file__
from kassign import protocol
from kassign._adapter_common import member_from_subscription_bytes

def member(d):
    owned = d.get("owned", [])
    owned = [tuple(x) for x in owned] if isinstance(owned, list) else owned
    user_data = bytes.fromhex(d["user_data"]) if d.get("user_data") else None
    return kassign.Member(d["topics"], owned, d.get("generation", -1), d.get("rack"), d.get("instance"), user_data)

def racks(c):
    r = c.get("racks")
    return None if r is None else {(t, p): rs for t, p, rs in r}

def lags(c):
    l = c.get("lags")
    return None if l is None else {(t, p): v for t, p, v in l}

def run(c):
    op = c["op"]
    if op == "assign":
        members = {mid: member(d) for mid, d in c["members"]}
        r = kassign.assign(c["strategy"], members, dict(c["partitions"]), lags=lags(c), partition_racks=racks(c),
                           **c.get("options", {}))
        return [[mid, [list(tp) for tp in tps]] for mid, tps in r.items()]
    if op == "member":
        m = member(c["member"])
        return [list(m.topics), [list(tp) for tp in m.owned_partitions], m.generation, m.rack, m.group_instance_id]
    if op == "wire":
        inst = dict(c.get("instances", []))
        members = {mid: member_from_subscription_bytes(c["strategy"], mid, bytes.fromhex(data), inst.get(mid))
                   for mid, data in c["subscriptions"]}
        r = kassign.assign(c["strategy"], members, dict(c["partitions"]), lags=lags(c), partition_racks=racks(c),
                           **c.get("options", {}))
        return [[mid, protocol.encode_assignment(tps, None, 3).hex()] for mid, tps in r.items()]
    if op == "decode_subscription":
        s = protocol.decode_subscription(bytes.fromhex(c["data"]))
        return [s.version, list(s.topics), s.user_data.hex() if s.user_data is not None else None,
                [list(tp) for tp in s.owned_partitions], s.generation, s.rack]
    if op == "encode_subscription":
        return protocol.encode_subscription(c["topics"], None, [tuple(x) for x in c["owned"]], c["generation"],
                                            c.get("rack"), c["version"]).hex()
    raise ValueError(op)

out = []
for c in json.load(sys.stdin):
    try:
        out.append({"ok": run(c)})
    except Exception as e:
        out.append({"error": [type(e).__name__, str(e)]})
json.dump(out, sys.stdout)
"""


def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Outcomes of the legacy implementation on ``cases`` (see :data:`RUNNER`)."""
    site = build()
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(site)],
        input=json.dumps(cases),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"legacy runner failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)
