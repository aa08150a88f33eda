"""kassign.fleet.measure: wall time and peak RSS of a process tree (the fleet scale run's tool)."""

import json
import sys

import pytest

from kassign.fleet import measure

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")

# a child that holds ~200 MiB for a second, started by a parent that holds little
CHILD = "import time; b = bytearray(200 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.0)"
PARENT = f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-c', {CHILD!r}]))"


def test_peak_rss_counts_the_whole_tree(tmp_path):
    out = tmp_path / "m.json"
    rc = measure.main(["--interval", "0.1", "--json", str(out), "--", sys.executable, "-c", PARENT])
    assert rc == 0
    r = json.loads(out.read_text())
    assert r["exit_code"] == 0 and r["peak_processes"] >= 2
    assert 200 <= r["peak_rss_mib"]["total"] < 400, r
    assert r["peak_rss_mib"]["total"] == r["peak_rss_mib"]["other"]  # no JVM, no PySpark worker
    assert r["wall_s"] >= 1.0


def test_exit_code_is_passed_through():
    assert measure.main(["--interval", "0.05", "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
