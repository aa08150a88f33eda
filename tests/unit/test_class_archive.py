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


def _archives(d, keys_and_times):
    d.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, t in keys_and_times:
        p = d / f"spark-classes-{key}.jsa"
        p.write_bytes(b"x")
        os.utime(p, (t, t))
        paths[key] = p
    return paths


def test_a_recording_prunes_the_least_recently_used_default_archives(tmp_path):
    d = tmp_path / "kassign"
    paths = _archives(d, [("a" * 16, 1000), ("b" * 16, 3000), ("c" * 16, 2000), ("d" * 16, 4000)])
    (d / "spark-classes.jsa").write_bytes(b"named by the environment")
    (d / "other.jsa").write_bytes(b"not ours")
    new = paths["a" * 16]  # the one just recorded, whatever its time
    gone = classarchive.prune_archives(str(new), keep=2)
    assert sorted(gone) == sorted(str(paths[k * 16]) for k in "bc")
    assert sorted(os.listdir(d)) == sorted(["spark-classes.jsa", "other.jsa", new.name, paths["d" * 16].name])
    assert classarchive.prune_archives(str(new), keep=1) == [str(paths["d" * 16])]


def test_an_archive_named_by_the_environment_prunes_nothing(tmp_path):
    paths = _archives(tmp_path, [("a" * 16, 1000), ("b" * 16, 2000), ("c" * 16, 3000)])
    assert classarchive.prune_archives(str(tmp_path / "mine.jsa"), keep=1) == []
    assert all(p.exists() for p in paths.values())


def test_mapping_an_archive_marks_it_used_so_pruning_keeps_it(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    paths = _archives(tmp_path / "kassign", [("a" * 16, 1000), ("b" * 16, 2000), ("c" * 16, 3000)])
    monkeypatch.setattr(classarchive, "archive_path", lambda: str(paths["a" * 16]))
    assert plan("use").used
    assert os.stat(paths["a" * 16]).st_mtime > 3000
    assert classarchive.prune_archives(str(paths["c" * 16]), keep=2) == [str(paths["b" * 16])]


def test_finish_prunes_beside_the_new_archive(tmp_path, monkeypatch, no_gateway):
    monkeypatch.delenv(ENV, raising=False)
    d = tmp_path / "kassign"
    old = _archives(d, [("a" * 16, 1000), ("b" * 16, 2000)])
    target = d / f"spark-classes-{'c' * 16}.jsa"
    monkeypatch.setattr(classarchive, "archive_path", lambda: str(target))
    p = plan("auto")
    assert p.recording is not None
    with open(p.recording, "wb") as f:
        f.write(b"archive")
    assert finish(p, _Stopped()) == str(target)
    assert sorted(os.listdir(d)) == sorted([target.name, old["b" * 16].name])
