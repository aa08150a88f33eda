"""A class archive for the Spark driver's JVM: dynamic class data sharing (JEP 350, JDK 13+).

Most of a small fleet job's Spark time is the JVM loading and verifying Spark's classes: the
session start and the first query plans. The JVM can write the classes one run loaded to an
archive at exit (``-XX:ArchiveClassesAtExit``) and map that archive in later runs
(``-XX:SharedArchiveFile``), so their classes are not parsed and verified again. On the demo's
job Spark's first job started 3.7 s after the application did, against 9.0 s without the archive
(notes/fleet-measurements.md).

How the job uses it (``kassign fleet --class-archive``, :data:`MODES`):

* ``auto`` (the default): use the archive when it exists; otherwise record it during this run, at
  the JVM's exit, after the report is written. A recording run is slower (the JVM keeps what it
  needs to write the archive), so ``make demo`` records it in its set-up with a small run
  (``python -m kassign.fleet.warmup``).
* ``use``: use it when it exists, never record.
* ``off``: neither (also ``KASSIGN_SPARK_CLASS_ARCHIVE=off``).

The archive only applies when ``kassign fleet`` starts the driver's JVM itself (not under
``spark-submit``, whose JVM is already running), and only to that JVM (executors on a cluster keep
their own start-up). ``--conf spark.driver.extraJavaOptions=...`` replaces the job's JVM options,
this archive's included.

Where: ``$KASSIGN_SPARK_CLASS_ARCHIVE`` if it names a file, else
``$XDG_CACHE_HOME/kassign`` (``~/.cache/kassign``) as ``spark-classes-<key>.jsa``, about 190 MB (a
path with a space or a quote goes without the archive: Spark splits the JVM options at spaces).
The key is a hash of what the archive depends on: the ``java`` that ``spark-submit`` runs (its
real path and its ``libjvm.so``'s size and time) and pyspark's jars (version, directory, each
jar's name and size). The JVM checks the archive again when it maps it (its own version, the
class path's jars); an archive it cannot use is ignored, quietly, and the job runs as without
one. A recording is written under a temporary name and renamed when the JVM has exited, so a
reader never sees a partial archive; a recording left by a run that ended first (killed, failed)
is deleted by the next recording run; deleting the archive is always safe.

Each pyspark install (a venv, a checkout) or JDK has its own key, so archives of old installs would
pile up in the cache at 190 MB each. A run that maps an archive marks it used (its time); a run that
records one deletes the default-named archives beyond the :data:`KEEP` most recently used, the new
one included. An archive named by ``$KASSIGN_SPARK_CLASS_ARCHIVE`` is never pruned, nor prunes.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import Any

#: ``--class-archive`` values.
MODES = ("auto", "use", "off")
#: Environment variable: ``off`` disables the archive, a path sets the archive's file.
ENV = "KASSIGN_SPARK_CLASS_ARCHIVE"
#: JVM options that keep the JVM quiet about an archive it cannot map (it then runs without).
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: How many default-named archives (``spark-classes-<key>.jsa``) a recording run leaves in the cache.
KEEP = 2
_DEFAULT_NAME = re.compile(r"spark-classes-[0-9a-f]{16}\.jsa")


@dataclass(frozen=True)
class Plan:
    """What this run does with the archive: the JVM options to add, and where a recording goes."""

    path: str | None  # the archive's file (None: off or no java found)
    jvm_options: str  # "" when the archive is not used
    recording: str | None = None  # the temporary file the JVM writes at exit, when recording

    @property
    def used(self) -> bool:
        return bool(self.jvm_options) and self.recording is None


def _java() -> str | None:
    """The ``java`` that pyspark's ``spark-class`` runs: ``$JAVA_HOME/bin/java``, else the one on
    ``PATH``; its real path."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def _spark_jars() -> str | None:
    try:
        import pyspark
    except ImportError:
        return None
    home = os.environ.get("SPARK_HOME") or os.path.dirname(os.path.abspath(pyspark.__file__))
    jars = os.path.join(home, "jars")
    return jars if os.path.isdir(jars) else None


def archive_key(java: str, jars: str) -> str:
    """A hash of what the archive depends on (see the module docstring)."""
    import pyspark

    h = hashlib.sha256()
    h.update(f"{java}\0{pyspark.__version__}\0{os.path.realpath(jars)}\0".encode())
    libjvm = os.path.join(os.path.dirname(os.path.dirname(java)), "lib", "server", "libjvm.so")
    for path in (java, libjvm):
        try:
            st = os.stat(path)
            h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        except OSError:
            h.update(f"{path}\0-\0".encode())
    for entry in sorted(os.scandir(jars), key=lambda e: e.name):
        if entry.name.endswith(".jar"):
            h.update(f"{entry.name}\0{entry.stat().st_size}\0".encode())
    return h.hexdigest()[:16]


def archive_path() -> str | None:
    """The archive's file for this machine's ``java`` and pyspark (it may not exist yet); None when
    disabled (``KASSIGN_SPARK_CLASS_ARCHIVE=off``) or when no ``java`` or pyspark jars are found."""
    env = os.environ.get(ENV, "")
    if env.lower() == "off":
        return None
    if env:
        return os.path.abspath(env)
    java, jars = _java(), _spark_jars()
    if java is None or jars is None:
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "kassign", f"spark-classes-{archive_key(java, jars)}.jsa")


def plan(mode: str) -> Plan:
    """The archive's part of the driver's JVM options for ``mode`` (:data:`MODES`)."""
    if mode not in MODES:
        raise ValueError(f"class archive: expected one of {', '.join(MODES)}, got {mode!r}")
    path = None if mode == "off" else archive_path()
    if path is None or any(c.isspace() or c in "'\"\\" for c in path):
        # Spark splits spark.driver.extraJavaOptions at spaces: such a path would break the JVM's
        # command line, so the run goes without the archive
        return Plan(None, "")
    if os.path.isfile(path):
        _mark_used(path)
        return Plan(path, f"-XX:SharedArchiveFile={path} {QUIET}")
    if mode == "use":
        return Plan(path, "")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    remove_stale_recordings(path)
    tmp = f"{path}.{os.getpid()}-{time.monotonic_ns()}.tmp"
    return Plan(path, f"-XX:ArchiveClassesAtExit={tmp} {QUIET}", recording=tmp)


def remove_stale_recordings(path: str) -> list[str]:
    """Delete the temporary recordings of ``path`` (``<path>.<pid>-<n>.tmp``) whose process is gone:
    a run that ended before moving its recording into place (killed, or its JVM outlived it) leaves
    one, possibly cut short. Returns the deleted files."""
    d, base = os.path.split(path)
    gone: list[str] = []
    try:
        names = os.listdir(d)
    except OSError:
        return gone
    for name in names:
        if not (name.startswith(base + ".") and name.endswith(".tmp")):
            continue
        pid = name[len(base) + 1 :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            _remove(os.path.join(d, name))
            gone.append(os.path.join(d, name))
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


def finish(p: Plan, spark: Any, timeout: float = 120.0) -> str | None:
    """After a recording run: stop Spark, let the driver's JVM exit (it writes the archive then),
    and move the recording into place. Returns the archive's path, or None when the JVM wrote
    nothing (it is then left for a later run to record)."""
    if p.recording is None or p.path is None:
        return None
    from pyspark import SparkContext

    spark.stop()
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    exited = True
    if proc is not None:
        # the JVM exits (status 0) when its stdin closes (PythonGatewayServer), writing the archive
        # first; one killed here, or failing, may have written part of it
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            exited = proc.wait(timeout=timeout) == 0
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            exited = False
        SparkContext._gateway = None
        SparkContext._jvm = None
    if not exited or not os.path.isfile(p.recording) or os.path.getsize(p.recording) == 0:
        _remove(p.recording)
        return None
    os.replace(p.recording, p.path)
    prune_archives(p.path)
    return p.path


def _mark_used(path: str) -> None:
    try:
        os.utime(path)
    except OSError:  # another user's archive: used all the same, only not marked
        pass


def prune_archives(path: str, keep: int = KEEP) -> list[str]:
    """Delete the default-named archives beside ``path`` beyond the ``keep`` most recently used
    (``path`` itself is always kept). Nothing is pruned when ``path`` is not default-named (one set
    by ``$KASSIGN_SPARK_CLASS_ARCHIVE``). Returns the deleted files."""
    d, base = os.path.split(path)
    if not _DEFAULT_NAME.fullmatch(base):
        return []
    try:
        names = [n for n in os.listdir(d) if _DEFAULT_NAME.fullmatch(n) and n != base]
    except OSError:
        return []
    used: list[tuple[float, str]] = []
    for name in names:
        try:
            used.append((os.stat(os.path.join(d, name)).st_mtime, name))
        except OSError:
            continue
    used.sort(reverse=True)
    gone = [os.path.join(d, name) for _, name in used[max(keep - 1, 0) :]]
    for f in gone:
        _remove(f)
    return gone


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
