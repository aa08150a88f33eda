"""The driver JVM's class archive (kassign.fleet.classarchive): where it lives, what each mode
adds to the JVM's options, and how a recording is moved into place. The Spark runs that record,
use and survive a broken archive are in tests/spark/test_spark_class_archive.py."""

import os
from types import SimpleNamespace

import pytest

from kassign.fleet import classarchive
from kassign.fleet.classarchive import ENV, Plan, archive_key, finish, plan


@pytest.fixture
def archive(tmp_path, monkeypatch):
    path = tmp_path / "cache" / "spark-classes.jsa"
    monkeypatch.setenv(ENV, str(path))
    return path


def test_off_adds_nothing(archive):
    assert plan("off") == Plan(None, "")
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"x")
    assert plan("off") == Plan(None, "")


def test_env_off_disables_every_mode(monkeypatch):
    monkeypatch.setenv(ENV, "OFF")
    assert classarchive.archive_path() is None
    for mode in classarchive.MODES:
        assert plan(mode) == Plan(None, "")


def test_missing_archive_auto_records_to_a_temporary_file_beside_it(archive):
    p = plan("auto")
    assert p.path == str(archive)
    assert p.recording is not None and not p.used
    assert os.path.dirname(p.recording) == str(archive.parent)  # created, and a rename stays on one disk
    assert archive.parent.is_dir()
    assert p.recording != str(archive) and p.recording.endswith(".tmp")
    assert f"-XX:ArchiveClassesAtExit={p.recording}" in p.jvm_options.split()
    assert "-XX:SharedArchiveFile" not in p.jvm_options
    # two recording runs never write the same file
    assert plan("auto").recording != p.recording


def test_missing_archive_use_adds_nothing(archive):
    p = plan("use")
    assert p.jvm_options == "" and p.recording is None and not p.used


@pytest.mark.parametrize("mode", ["auto", "use"])
def test_existing_archive_is_mapped_quietly(archive, mode):
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"x")
    p = plan(mode)
    assert p.used and p.recording is None
    opts = p.jvm_options.split()
    assert f"-XX:SharedArchiveFile={archive}" in opts
    assert "-Xlog:cds=off" in opts and "-Xlog:cds+dynamic=off" in opts
    assert not any(o.startswith("-XX:ArchiveClassesAtExit") for o in opts)


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="expected one of auto, use, off, got 'always'"):
        plan("always")


def _fake_java(root):
    (root / "bin").mkdir(parents=True)
    (root / "lib" / "server").mkdir(parents=True)
    java = root / "bin" / "java"
    java.write_text("java")
    (root / "lib" / "server" / "libjvm.so").write_bytes(b"\0" * 10)
    jars = root / "jars"
    jars.mkdir()
    for name in ("a.jar", "b.jar"):
        (jars / name).write_bytes(b"\0" * 5)
    return str(java), jars


def test_key_follows_the_java_and_the_jars(tmp_path):
    java, jars = _fake_java(tmp_path / "one")
    key = archive_key(java, str(jars))
    assert key == archive_key(java, str(jars))
    assert len(key) == 16 and int(key, 16) >= 0
    (jars / "notes.txt").write_text("not a jar")
    assert archive_key(java, str(jars)) == key
    (jars / "b.jar").write_bytes(b"\0" * 6)  # a jar's size
    k2 = archive_key(java, str(jars))
    assert k2 != key
    (jars / "c.jar").write_bytes(b"")  # one more jar
    k3 = archive_key(java, str(jars))
    assert k3 not in (key, k2)
    libjvm = tmp_path / "one" / "lib" / "server" / "libjvm.so"
    libjvm.write_bytes(b"\0" * 11)  # another JVM build in the same place
    assert archive_key(java, str(jars)) not in (key, k2, k3)
    other, _ = _fake_java(tmp_path / "two")  # another java
    assert archive_key(other, str(jars)) != archive_key(java, str(jars))


def test_default_path_is_in_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    java, jars = _fake_java(tmp_path / "jdk")
    monkeypatch.setattr(classarchive, "_java", lambda: java)
    monkeypatch.setattr(classarchive, "_spark_jars", lambda: str(jars))
    assert classarchive.archive_path() == str(
        tmp_path / "kassign" / f"spark-classes-{archive_key(java, str(jars))}.jsa"
    )
    monkeypatch.setattr(classarchive, "_java", lambda: None)
    assert classarchive.archive_path() is None


@pytest.fixture
def no_gateway(monkeypatch):
    # finish() ends the JVM this process launched; these tests run without one (another test
    # module's session may have left its gateway in this process)
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_gateway", None)
    monkeypatch.setattr(SparkContext, "_jvm", None)


class _Stopped:
    def __init__(self):
        self.stopped = 0

    def stop(self):
        self.stopped += 1


def test_finish_moves_the_recording_into_place(archive, no_gateway):
    p = plan("auto")
    assert p.recording is not None
    with open(p.recording, "wb") as f:
        f.write(b"archive")
    spark = _Stopped()
    assert finish(p, spark) == str(archive)
    assert spark.stopped == 1
    assert archive.read_bytes() == b"archive" and not os.path.exists(p.recording)


@pytest.mark.parametrize("content", [None, b""])
def test_finish_without_a_recording_leaves_no_archive(archive, content, no_gateway):
    p = plan("auto")
    assert p.recording is not None
    if content is not None:
        with open(p.recording, "wb") as f:
            f.write(content)
    assert finish(p, _Stopped()) is None
    assert not archive.exists() and not os.path.exists(p.recording)


def test_finish_after_a_run_that_did_not_record_does_nothing(archive):
    spark = _Stopped()
    assert finish(Plan(str(archive), ""), spark) is None
    assert spark.stopped == 0


def test_recordings_of_finished_processes_are_removed(archive):
    import subprocess
    import sys

    archive.parent.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)
    stale = archive.parent / f"{archive.name}.{dead}-123.tmp"
    mine = archive.parent / f"{archive.name}.{os.getpid()}-5.tmp"
    running = archive.parent / f"{archive.name}.1-7.tmp"  # init: alive
    other = archive.parent / "notes.tmp"
    for f in (stale, mine, running, other):
        f.write_bytes(b"partial")
    p = plan("auto")  # a recording run clears what dead runs left
    assert p.recording is not None
    assert not stale.exists()
    assert mine.exists() and running.exists() and other.exists()
    assert classarchive.remove_stale_recordings(str(archive)) == []


class _Proc:
    """A stand-in for the driver JVM's process: exits with ``status``, or never (``status`` None)."""

    def __init__(self, status):
        import io

        self.status, self.stdin, self.killed = status, io.BytesIO(), False

    def wait(self, timeout=None):
        import subprocess

        if self.status is None and not self.killed:
            raise subprocess.TimeoutExpired("java", timeout)
        return -9 if self.killed else self.status

    def kill(self):
        self.killed = True


@pytest.mark.parametrize("status, kept", [(0, True), (1, False), (None, False)])
def test_finish_keeps_only_what_a_cleanly_exited_jvm_wrote(archive, monkeypatch, status, kept):
    from pyspark import SparkContext

    proc = _Proc(status)
    monkeypatch.setattr(SparkContext, "_gateway", SimpleNamespace(proc=proc))
    monkeypatch.setattr(SparkContext, "_jvm", object())
    p = plan("auto")
    assert p.recording is not None
    with open(p.recording, "wb") as f:
        f.write(b"archive, perhaps cut short")
    got = finish(p, _Stopped(), timeout=0.01)
    assert proc.stdin.closed and (proc.killed == (status is None))
    assert SparkContext._gateway is None and SparkContext._jvm is None  # a later session starts a JVM
    assert got == (str(archive) if kept else None)
    assert archive.exists() == kept and not os.path.exists(p.recording)


@pytest.mark.parametrize("name", ["with space", "tab\there", "quote'd", 'double"d', "back\\slash"])
def test_a_path_spark_would_split_goes_without_the_archive(tmp_path, monkeypatch, name):
    path = tmp_path / name / "spark-classes.jsa"
    monkeypatch.setenv(ENV, str(path))
    for mode in ("auto", "use"):
        assert plan(mode) == Plan(None, "")
    path.parent.mkdir()
    path.write_bytes(b"x")
    assert plan("auto") == Plan(None, "")
    assert not path.parent.joinpath("x").exists() and sorted(os.listdir(path.parent)) == ["spark-classes.jsa"]
