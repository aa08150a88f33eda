"""``kassign fleet`` with the driver JVM's class archive (kassign.fleet.classarchive), through the
CLI as a user runs it: the first run records the archive, the next one maps it, and an archive the
JVM cannot use is ignored, quietly. The three runs give the same results."""

import os
import subprocess
import zipfile

import pytest

from support.spark_env import fleet_cli, require_spark

require_spark()

import pyarrow.parquet as pq  # noqa: E402
import pyspark  # noqa: E402

from kassign.fleet.classarchive import ENV, _java  # noqa: E402
from kassign.fleet.synth import synth  # noqa: E402

pytestmark = pytest.mark.spark

#: Result columns that depend on the machine (timings), left out of the comparison.
TIMES = {"time_ms", "churn_time_ms"}


def _run(snap, out, archive):
    args = ["--snapshot", str(snap), "--strategies", "range,sticky,lag-aware", "--churn", "1", "--partitions", "2"]
    proc = fleet_cli(args, out, env={ENV: str(archive)}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = pq.read_table(out / "results.parquet")
    table = table.select([c for c in table.column_names if c not in TIMES])
    return proc, table.sort_by([("cluster", "ascending"), ("group_id", "ascending"), ("strategy", "ascending")])


def test_record_then_use_then_ignore_a_broken_archive(tmp_path):
    snap = tmp_path / "snap"
    synth(6, str(snap), seed=3)
    archive = tmp_path / "cache" / "classes.jsa"

    first, results = _run(snap, tmp_path / "first", archive)
    assert "recording the JVM class archive" in first.stderr
    assert "recorded the JVM class archive" in first.stderr, first.stderr[-3000:]
    assert archive.is_file() and archive.stat().st_size > 2**20
    assert list(archive.parent.iterdir()) == [archive]  # no temporary file left
    assert results.num_rows == 6 * 3

    second, again = _run(snap, tmp_path / "second", archive)
    assert f"JVM class archive {archive}" in second.stderr
    assert "recording" not in second.stderr
    assert again.equals(results)

    # an archive of another class path: the JVM cannot use it and says so (stdout) unless told to
    # be quiet, as the job tells it
    archive.unlink()
    java = _java()
    assert java is not None
    other_jar = _one_class_jar(tmp_path / "other", java)
    subprocess.run([java, f"-XX:ArchiveClassesAtExit={archive}", "-cp", str(other_jar), "A"], check=True)
    home = os.path.dirname(pyspark.__file__)
    spark_cp = os.pathsep.join([os.path.join(home, "conf"), os.path.join(home, "jars", "*")])  # as spark-submit
    loud = subprocess.run(
        [java, f"-XX:SharedArchiveFile={archive}", "-cp", spark_cp, "-version"], capture_output=True, text=True
    )
    assert "unable to use shared archive" in (loud.stdout + loud.stderr).lower()  # the check below can fail
    other = archive.read_bytes()
    third, mismatched = _run(snap, tmp_path / "third", archive)
    assert mismatched.equals(results)
    assert f"JVM class archive {archive}" in third.stderr
    assert "cds" not in (third.stderr + third.stdout).lower()
    assert archive.read_bytes() == other  # kept: only a missing archive is recorded


def _one_class_jar(d, java):
    """A jar of one class ``A`` with an empty ``main``, compiled by the JDK's ``javac``."""
    d.mkdir()
    (d / "A.java").write_text("class A { public static void main(String[] args) {} }\n")
    subprocess.run([os.path.join(os.path.dirname(java), "javac"), "-d", str(d), str(d / "A.java")], check=True)
    jar = d / "a.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.write(d / "A.class", "A.class")
    return jar
