"""``kassign fleet`` on a real Spark standalone cluster: a master and two workers on loopback, started
from the scripts that ship in the pyspark package (``sbin/spark-daemon.sh``, which the full
distribution's ``start-master.sh``/``start-worker.sh`` wrap; the pyspark wheel has the daemon script
only). The executors run a Python that has pyarrow but not kassign: the job works only because
``--ship-kassign`` sends the package and its compiled extension to them. Results equal local mode's.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request

import pyarrow.parquet as pq
import pyspark  # the spark extra is in requirements-dev.txt
import pytest

pytestmark = pytest.mark.spark

SPARK_HOME = os.path.dirname(pyspark.__file__)
DAEMON = os.path.join(SPARK_HOME, "sbin", "spark-daemon.sh")
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _executor_python(tmp) -> str:
    """A venv whose Python sees this venv's packages (pyarrow, pandas, pyspark) but not kassign:
    its .pth adds site-packages as a plain path, so the editable kassign.pth in there is not read."""
    env_dir = tmp / "executor-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    site = sysconfig.get_paths()["purelib"]
    (target,) = list((env_dir / "lib").glob("python3*/site-packages"))
    (target / "driver-deps.pth").write_text(site + "\n")
    python = str(env_dir / "bin" / "python")
    probe = subprocess.run(
        [python, "-c", "import pyarrow, pyspark\ntry:\n import kassign\nexcept ImportError:\n print('no kassign')"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.stdout.strip() == "no kassign", probe.stdout + probe.stderr
    return python


class Cluster:
    def __init__(self, tmp) -> None:
        self.dir = tmp
        self.port, self.ui = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SPARK_HOME": SPARK_HOME,
            "SPARK_LOG_DIR": str(tmp / "logs"),
            "SPARK_PID_DIR": str(tmp / "pids"),
            "SPARK_IDENT_STRING": f"kassign-test-{os.getpid()}",
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_NICENESS": "10",
            "SPARK_DAEMON_MEMORY": "384m",
        }
        self.env.pop("SPARK_NO_DAEMONIZE", None)
        self.started: list[tuple[str, int]] = []

    def _daemon(self, action: str, cls: str, instance: int, *args: str) -> None:
        subprocess.run(
            ["bash", DAEMON, action, cls, str(instance), *args],
            env=self.env,
            check=True,
            timeout=120,
            capture_output=True,
        )

    def pid(self, cls: str, instance: int) -> int | None:
        path = self.dir / "pids" / f"spark-{self.env['SPARK_IDENT_STRING']}-{cls}-{instance}.pid"
        return int(path.read_text()) if path.exists() else None

    def start(self) -> None:
        self._daemon("start", MASTER, 1, "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui))
        self.started.append((MASTER, 1))
        for i in (1, 2):
            self._daemon(
                "start",
                WORKER,
                i,
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                "1g",
                "--webui-port",
                str(_free_port()),
                "--work-dir",
                str(self.dir / f"work-{i}"),
                self.url,
            )
            self.started.append((WORKER, i))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as r:
                    state = json.load(r)
                if sum(w["state"] == "ALIVE" for w in state.get("workers", [])) == 2:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"standalone cluster not up after {START_TIMEOUT:.0f}s; logs in {self.dir / 'logs'}")
            time.sleep(1)

    def stop(self) -> None:
        """Stop every daemon this cluster started: the script's SIGTERM, then SIGKILL of the same
        pid if it is still there after STOP_TIMEOUT."""
        for cls, i in reversed(self.started):
            pid = self.pid(cls, i)
            try:
                self._daemon("stop", cls, i)
            except (subprocess.SubprocessError, OSError):
                pass
            if pid is None:
                continue
            deadline = time.monotonic() + STOP_TIMEOUT
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    if not os.path.exists(DAEMON):
        pytest.fail(f"{DAEMON} missing: the pyspark package is expected to ship sbin/spark-daemon.sh")
    cluster = Cluster(tmp_path_factory.mktemp("spark-standalone"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _fleet(args, env, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "kassign", "fleet", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def _rows(path):
    t = pq.read_table(path)
    rows = t.drop(["time_ms", "churn_time_ms"]).to_pylist()
    return sorted(rows, key=lambda r: (r["cluster"], r["group_id"], r["strategy"]))


def test_fleet_on_a_standalone_cluster_equals_local_mode(standalone, fleet_cli_run, tmp_path):
    # local mode: the session's CLI run (tests/conftest.py), on the same snapshot and options
    local = fleet_cli_run.proc
    assert local.returncode == 0, local.stderr[-3000:]
    common = [*fleet_cli_run.args, "--quiet"]
    env = fleet_cli_run.env

    exec_python = _executor_python(tmp_path)
    cluster_env = {**env, "PYSPARK_PYTHON": exec_python, "SPARK_LOCAL_IP": "127.0.0.1"}
    out = tmp_path / "cluster"
    run = _fleet(
        [
            *common,
            "--master",
            standalone.url,
            "--out",
            str(out),
            "--ship-kassign",
            "--conf",
            "spark.executor.memory=512m",
            "--conf",
            "spark.executor.cores=1",
        ],
        cluster_env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert (out / "kassign-package.tar.gz").exists()

    # Both workers ran executors of the application, and each unpacked the shipped package.
    unpacked = sorted(
        str(p) for i in (1, 2) for p in (standalone.dir / f"work-{i}").glob("app-*/*/kassign-package/kassign/_core*")
    )
    assert len(unpacked) >= 2 and {p.split("/work-")[1][0] for p in unpacked} == {"1", "2"}, unpacked

    got, want = _rows(out / "results.parquet"), _rows(fleet_cli_run.out / "results.parquet")
    from kassign.fleet.group import strategy_labels

    assert len(got) == fleet_cli_run.groups * len(strategy_labels())
    assert got == want
