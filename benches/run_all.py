"""Regenerate BENCHMARKS.md and the N = P log-log plot: kassign vs everything a user could pick instead.

    python benches/run_all.py                 # the whole report in one run (`make bench-full`)
    python benches/run_all.py --estimate      # the cells of that run and its expected duration
    python benches/run_all.py --smoke         # tiny sizes, a few minutes at most (CI)
    python benches/run_all.py --render-only   # rebuild the report from the last results JSON
    python benches/run_all.py --compare benches/results/baseline-2026-11-26.json   # slower cells

Every (scenario, strategy, contender) cell runs in its own process (see peers/contenders.py) one
after another, never two at once. Each single call is capped (``--cap``; ``--python-cap`` for the
pure-Python contenders); a contender whose call runs past the cap is killed and reported as
"> cap", never dropped. A cell is also reported "> cap" without running when the same contender
and strategy already exceeded the cap on a smaller scenario of the N = P series in the same round
(the report marks those "inferred"; across shapes, time is not monotone in size, so nothing is
inferred there). Python contenders run under an address-space limit (``--memory-gb``) and are
reported "> mem" when they hit it. After the grid, the run calls benches/drop_in.py and
benches/broker_plugin.py (``--extras``) and keeps their JSON beside its own cells. Results are
saved after every cell (``benches/results/<mode>.json``), so an interrupted run keeps what it
measured; ``--resume`` skips cells already measured.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import queue
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES.parent))  # the repo root: the peers package

from peers import contenders as C  # noqa: E402
from peers import scenarios as S  # noqa: E402

REPO = BENCHES.parent
RESULTS_DIR = BENCHES / "results"
#: The results of the report before the one-run redesign (24 Nov to 26 Nov 2026, with the server-*
#: cells of that time's results/server.json): what `--compare` and `--estimate` read by default.
BASELINE = RESULTS_DIR / "baseline-2026-11-26.json"


# --------------------------------------------------------------------------------------------
# Running one cell
# --------------------------------------------------------------------------------------------


def _limit_memory(gb: float):
    def apply():
        limit = int(gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_cell(cmd: list[str], cap: float, setup_timeout: float, memory_gb: float | None) -> dict[str, Any]:
    """Run one contender process, enforcing the per-call cap; parse its line protocol."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        preexec_fn=_limit_memory(memory_gb) if memory_gb else None,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    err_chunks: list[str] = []

    def pump_out():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_err():
        err_chunks.append(proc.stderr.read())

    threading.Thread(target=pump_out, daemon=True).start()
    t_err = threading.Thread(target=pump_err, daemon=True)
    t_err.start()
    samples: list[float] = []
    cpus: list[float] = []
    warmups: list[float] = []
    ready = False
    done: dict | None = None
    status = None
    started = time.monotonic()
    last = started
    while True:
        limit = (cap if ready else setup_timeout) - (time.monotonic() - last)
        try:
            line = lines.get(timeout=max(limit, 0.01))
        except queue.Empty:
            status = "cap" if ready else "setup-timeout"
            proc.kill()
            break
        if line is None:
            break
        last = time.monotonic()
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = ev.get("event")
        if kind == "unsupported":
            status = "unsupported"
        elif kind == "ready":
            ready = True
        elif kind == "warmup":
            warmups.append(ev["seconds"])
        elif kind == "sample":
            samples.append(ev["seconds"])
            if isinstance(ev.get("cpu"), (int, float)) and ev["cpu"] >= 0:
                cpus.append(ev["cpu"])
        elif kind == "done":
            done = ev
    proc.wait()
    t_err.join(timeout=5)
    stderr = "".join(err_chunks)
    out: dict[str, Any] = {
        "cmd": " ".join(shlex.quote(c) for c in cmd),
        "wall_s": time.monotonic() - started,
        "warmups": warmups,
        "samples": sorted(samples),
    }
    if status == "unsupported":
        out["status"] = "unsupported"
    elif done is not None:
        out["status"] = "ok"
        out["median"] = done["median"]
        if cpus:
            out["cpu_samples"] = sorted(cpus)
            out["cpu_median"] = statistics.median(cpus)
    elif status == "cap":
        # The call in flight ran past the cap. Earlier complete calls, if any, are kept for the record.
        out["status"] = "cap"
    elif status == "setup-timeout":
        out["status"] = "error"
        out["error"] = f"input setup took more than {setup_timeout:.0f} s"
    else:
        tail = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        msg = tail[-1] if tail else f"exit code {proc.returncode}"
        out["status"] = "mem" if ("MemoryError" in stderr or "OutOfMemoryError" in stderr) else "error"
        out["error"] = msg[:300]
    return out


def contender_command(contender: str, strategy: str, scenario_file: str, args, out_file: str) -> list[str]:
    if contender in C.PYTHON_CONTENDERS:
        return [
            sys.executable,
            C.__file__,
            "run",
            "--contender",
            contender,
            "--strategy",
            strategy,
            "--repeat",
            str(args.repeat),
            "--budget",
            str(args.budget),
            "--min-time",
            str(args.min_time),
            "--warmup",
            str(args.warmup),
            "--out",
            out_file,
            scenario_file,
        ]
    extra = [
        "--repeat",
        str(args.repeat),
        "--budget",
        str(args.budget),
        "--min-time",
        str(args.min_time),
        "--out",
        out_file,
    ]
    extra += ["--warmup", str(args.java_warmup if contender == "java" else args.warmup)]
    return C.peer_command(contender, "time", strategy, scenario_file, extra)


# --------------------------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------------------------


def _cmd_output(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout.strip()
    except Exception as e:
        return f"unavailable ({e.__class__.__name__})"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def versions(have_java: bool, have_go: bool) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    v: dict[str, str] = {}
    for pkg in ("kassign", "kafka-python", "aiokafka", "pytest-benchmark"):
        try:
            v[pkg] = version(pkg)
        except PackageNotFoundError:
            v[pkg] = "not installed"
    try:
        import kassign

        v["kassign strategies"] = ", ".join(kassign.STRATEGIES)
    except Exception as e:
        v["kassign strategies"] = f"import failed: {e}"
    v["kassign commit"] = kassign_commit()
    v["rustc"] = _cmd_output(["rustc", "--version"])
    if have_java:
        j = json.loads(_cmd_output(C.java_command("1g") + ["version"]) or "{}")
        v["kafka-clients (Java)"] = j.get("kafka_clients", "?")
        v["Java"] = j.get("java", "?")
    if have_go:
        g = json.loads(_cmd_output([str(C.GO_BIN), "version"]) or "{}")
        v["franz-go"] = g.get("franz_go", "?")
        v["Go"] = g.get("go", "?")
    return v


#: The paths that make up the kassign build being measured.
KASSIGN_PATHS = ("rust", "python", "Cargo.toml", "Cargo.lock", "pyproject.toml")


def kassign_commit() -> str:
    """The last commit that changed kassign's code (not HEAD: commits to docs, tests or benches do
    not change what is measured), with "+dirty" when that code has uncommitted changes."""
    head = _cmd_output(["git", "-C", str(REPO), "log", "-1", "--format=%h", "--", *KASSIGN_PATHS])
    dirty = _cmd_output(["git", "-C", str(REPO), "status", "--porcelain", "--", *KASSIGN_PATHS])
    return head + ("+dirty" if dirty else "") + _extension_stamp()


_EXTENSION_PATH: list[str] = []


def _extension_stamp() -> str:
    """When the compiled extension that `import kassign` loads was built: a rebuild of the same
    commit (or of uncommitted changes) is another build to measure. Read before every kassign
    cell, so a rebuild in the middle of a run is seen."""
    if not _EXTENSION_PATH:
        _EXTENSION_PATH.append(_cmd_output([sys.executable, "-c", "import kassign._core as c; print(c.__file__)"]))
    try:
        built = _dt.datetime.fromtimestamp(int(os.path.getmtime(_EXTENSION_PATH[0])), _dt.timezone.utc)
    except (OSError, ValueError):
        return ""
    return " ext " + built.strftime("%Y-%m-%dT%H:%M:%SZ")


def depends_on_kassign(contender: str) -> bool:
    """Cells of kassign's own contenders are tied to the kassign build; the peers' are not."""
    return contender.startswith("kassign")


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------


def results_path(smoke: bool, override: Path | None = None) -> Path:
    return override or RESULTS_DIR / ("smoke.json" if smoke else "full.json")


def save(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def cell_key(scenario: str, strategy: str, contender: str) -> str:
    return f"{scenario}|{strategy}|{contender}"


#: Contenders left out of the default run on the classic strategies (they still run when named in
#: ``--contenders``): ``kassign-protocol`` is 0.1's leader route through Python objects, superseded
#: by ``kassign-wire`` and the drop-in classes; ``kassign-owners`` is the owner-array form of
#: ``kassign.assign`` on the same core call and ``kassign-core`` the extension call alone; both are
#: timed on the server-* strategies, where the report compares them with Java.
GRID_LEFT_OUT = ("kassign-protocol", "kassign-owners", "kassign-core")
#: The scenarios the KIP-848 server-* strategies run on: the 1M-partition shapes and the N = P series
#: from 2100 up (where the broker's assignors spend their time; smaller groups take microseconds).
SERVER_SHAPES = ("np-2100/", "np-10000/", "np-100000/", "java-large-")
#: Contenders written in pure Python: their calls are capped at ``--python-cap``.
PURE_PYTHON = ("kassign-reference", "kafka-python", "aiokafka")


#: Shapes the pure-Python contenders and the Python clients' classes (their own and kassign's
#: drop-in ones) leave out: at 1M partitions the clients' own encode and decode of 2000 members'
#: 500-topic metadata takes most of a minute a cell, the clients' own sticky assignors already
#: exceed the cap at 10,000 partitions, and so the drop-in classes would have nothing to face there.
PURE_PYTHON_LEFT_OUT = ("java-large-",)
CLIENT_CLASSES = ("kassign-kafka-python", "kassign-aiokafka", "kafka-python", "aiokafka")


#: Round 2 of the N = P series runs only at this N (the KAFKA-9987 shape of the headline table):
#: the growth exponents and the plot are taken on fresh groups, and round 2 is timed on every other shape.
NP_ROUND2 = ("np-2100/",)


def left_out(name: str, strategy: str, contender: str) -> str | None:
    """Why a cell of the grid is not in a default run (None: it is)."""
    if name.startswith("np-") and name.endswith("/round2") and not name.startswith(NP_ROUND2):
        return "N = P round 2 only at 2100"
    if strategy in C.SERVER_STRATEGIES:
        if contender not in C.SERVER_CONTENDERS:
            return "no such assignor"
        if not name.startswith(SERVER_SHAPES):
            return "server-* run on the 1M shapes and N = P from 2100"
        return None
    if contender in GRID_LEFT_OUT:
        return "not in the default run"
    if (contender in PURE_PYTHON or contender in CLIENT_CLASSES) and name.startswith(PURE_PYTHON_LEFT_OUT):
        return "pure Python or a client's class: left out at 1M partitions"
    return None


def call_cap(args, contender: str) -> float:
    return args.python_cap if contender in PURE_PYTHON else args.cap


def plan(args) -> tuple[list[tuple[str, str, str]], dict[str, tuple[int, int]], list]:
    """The cells of a run, smallest scenario first, and the shapes' sizes."""
    shapes = S.smoke_shapes() if args.smoke else S.grid_shapes()
    sizes = {s.name: s.size() for s in shapes}
    names = [n for n in S.scenario_names(args.smoke) if not args.scenarios or any(f in n for f in args.scenarios)]
    # Smallest first, so "> cap" on a smaller case can stand for a larger one.
    names.sort(key=lambda n: (sizes[n.split("/")[0]][0] * sizes[n.split("/")[0]][1], n))
    contenders = [c for c in C.ALL_CONTENDERS if not args.contenders or c in args.contenders]
    # The KIP-848 server-* strategies are part of the full run; a smoke run has them when named.
    default = C.STRATEGIES if args.smoke else C.STRATEGIES + C.SERVER_STRATEGIES
    strategies = [s for s in C.STRATEGIES + C.SERVER_STRATEGIES if s in (args.strategies or default)]
    cells = []
    for name in names:
        for strategy in strategies:
            for contender in contenders:
                why = left_out(name, strategy, contender)
                # Named contenders run everywhere they have the strategy (the smoke grid is all small).
                if why and (why == "no such assignor" or not (args.contenders or args.smoke)):
                    continue
                cells.append((name, strategy, contender))
    return cells, sizes, shapes


def run(args) -> dict:
    planned, sizes, shapes = plan(args)
    contenders = [c for c in C.ALL_CONTENDERS if any(c == x for _, _, x in planned)]
    strategies = [s for s in C.STRATEGIES + C.SERVER_STRATEGIES if any(s == x for _, x, _ in planned)]

    unavailable: dict[str, str] = {}
    if "java" in contenders:
        try:
            C.build_java()
        except Exception as e:
            unavailable["java"] = f"build failed: {e}"
    if "franz-go" in contenders:
        try:
            C.build_go()
        except Exception as e:
            unavailable["franz-go"] = f"build failed: {e}"

    path = results_path(args.smoke, args.results)
    data: dict[str, Any] = {}
    if args.resume and path.exists():
        data = json.loads(path.read_text())
    data.setdefault("cells", {})
    # Inferred "> cap" cells are re-derived under the current rule (or measured) on every run.
    data["cells"] = {k: v for k, v in data["cells"].items() if not v.get("inferred_from")}
    old = data.get("meta")
    if old and "meta_runs" not in data:
        data["meta_runs"] = [{k: old.get(k) for k in ("started", "finished", "command", "load_start", "load_end")}]
    if args.redo:
        # Only the selected scenarios and strategies (--scenarios / --strategies) are measured again.
        chosen = {name for name, _, _ in planned}
        data["cells"] = {
            k: v
            for k, v in data["cells"].items()
            if not (k.split("|")[2] in args.redo and k.split("|")[1] in strategies and k.split("|")[0] in chosen)
        }
    old_versions = (old or {}).get("versions", {})
    data["meta"] = {
        "mode": "smoke" if args.smoke else "full",
        "started": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "cap_s": args.cap,
        "python_cap_s": args.python_cap,
        "budget_s": args.budget,
        "repeat": args.repeat,
        "min_time_s": args.min_time,
        "warmup_s": args.warmup,
        "java_warmup_s": args.java_warmup,
        "memory_gb": args.memory_gb,
        "machine": machine(),
        "load_start": loadavg(),
        "versions": versions(
            "java" not in unavailable and "java" in contenders,
            "franz-go" not in unavailable and "franz-go" in contenders,
        ),
        "unavailable": unavailable,
        "sizes": {n: list(v) for n, v in sizes.items()},
        "descriptions": {s.name: s.description for s in shapes},
        "np": {s.name: s.np for s in shapes if s.np},
    }
    # A resumed run that leaves out a peer keeps the versions that peer's cached cells were measured with.
    for k, v in old_versions.items():
        data["meta"]["versions"].setdefault(k, v)
    current_commit = data["meta"]["versions"].get("kassign commit")
    runs = data.get("meta_runs", [])
    runs.append(
        {
            "started": data["meta"]["started"],
            "command": data["meta"]["command"],
            "load_start": data["meta"]["load_start"],
        }
    )
    data["meta_runs"] = runs
    cells = data["cells"]
    supports = {(c, s): C.python_supports(c, s) for c in C.PYTHON_CONTENDERS for s in strategies}
    tmpdir = Path(tempfile.mkdtemp(prefix="kassign-bench-"))
    # Every scenario file first (written once, then cached under peers/.cache), so the cells' clock
    # and the progress line count only the cells.
    t_start = time.monotonic()
    for name in dict.fromkeys(name for name, _, _ in planned):
        S.scenario_path(name, args.smoke)
    print(f"scenario files ready in {time.monotonic() - t_start:.0f} s", flush=True)
    docs: dict[str, Any] = {}
    t_start = time.monotonic()
    for i, (name, strategy, contender) in enumerate(planned, 1):
        file = str(S.scenario_path(name, args.smoke))
        key = cell_key(name, strategy, contender)
        if depends_on_kassign(contender):
            current_commit = kassign_commit()
        if args.resume and key in cells and cells[key]["status"] in ("ok", "cap", "mem", "unsupported", "error"):
            # Peer cells stay valid whatever kassign's commit; kassign's own are redone when
            # they were measured on another build (for example before a strategy landed).
            if not depends_on_kassign(contender) or cells[key].get("kassign_commit") == current_commit:
                continue
        if contender in unavailable:
            cells[key] = {"status": "error", "error": unavailable[contender]}
            continue
        if contender in C.PYTHON_CONTENDERS and not supports[(contender, strategy)]:
            cells[key] = {"status": "unsupported"}
            if depends_on_kassign(contender):
                cells[key]["kassign_commit"] = current_commit
            continue
        inferred = _dominated_by_cap(cells, sizes, name, strategy, contender, current_commit)
        if inferred:
            cells[key] = {"status": "cap", "inferred_from": inferred}
            if depends_on_kassign(contender):
                cells[key]["kassign_commit"] = current_commit
            print(f"{name:34s} {strategy:18s} {contender:22s} > cap (inferred from {inferred})", flush=True)
            continue
        out_file = str(tmpdir / "assignment.json")
        if os.path.exists(out_file):
            os.remove(out_file)
        cmd = contender_command(contender, strategy, file, args, out_file)
        mem = args.memory_gb if contender in C.PYTHON_CONTENDERS else None
        res = run_cell(cmd, call_cap(args, contender), args.setup_timeout, mem)
        res["cap_s"] = call_cap(args, contender)
        if res["status"] == "ok" and os.path.exists(out_file):
            if name not in docs:
                docs.clear()  # one scenario document in memory at a time (the 1M ones are large)
                docs[name] = json.loads(Path(file).read_text())
            res["quality"] = C.quality(docs[name], C.read_assignment(Path(out_file).read_text()))
        res["load"] = loadavg()
        if depends_on_kassign(contender):
            res["kassign_commit"] = current_commit
        cells[key] = res
        shown = (
            fmt_time(res["median"])
            if res["status"] == "ok"
            else res["status"] + (f": {res.get('error')}" if res.get("error") else "")
        )
        elapsed = (time.monotonic() - t_start) / 60
        print(
            f"[{i}/{len(planned)}, {elapsed:.0f} min] {name:30s} {strategy:18s} {contender:20s} {shown}  "
            f"[load {res['load']}]",
            flush=True,
        )
        save(path, data)
    for extra in args.extras:
        data.setdefault("extras", {})[extra] = run_extra(extra, args, path)
        save(path, data)
    data["meta"]["load_end"] = loadavg()
    data["meta"]["finished"] = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    runs[-1].update(load_end=data["meta"]["load_end"], finished=data["meta"]["finished"])
    save(path, data)
    return data


#: The benchmarks that run_all.py calls after its grid, each through its own command line and JSON
#: output: name -> (script, its arguments in a full run, in a smoke run, the option naming its JSON).
EXTRAS: dict[str, tuple[str, list[str], list[str], str]] = {
    # The drop-in classes' leader step against the clients' own classes (issue 30).
    "drop-in": ("drop_in.py", [], ["--sizes", "10", "--strategies", "range,sticky"], "--out"),
    # kassign's broker plugin against the broker's UniformAssignor in one JVM (issue 27); the
    # plugin jar comes from `make broker-plugin`.
    "broker-plugin": (
        "broker_plugin.py",
        ["--budget", "3", "--warmup", "8"],
        ["--shapes", "np-100/fresh", "--budget", "0.2"],
        "--json",
    ),
    # Decoding 2000 large subscriptions into Python objects, kassign against kafka-python.
    "decode": ("decode_subscriptions.py", ["--runs", "3"], ["--runs", "1"], "--out"),
}


def run_extra(extra: str, args, results: Path) -> dict[str, Any]:
    """Run one of EXTRAS as a subprocess; its JSON (beside the results file; the default results
    file's extras go to benches/results/<name>.json, which docs/ quote), or the error it ended with."""
    script, full_args, smoke_args, out_opt = EXTRAS[extra]
    default_results = results == results_path(args.smoke)
    stem = extra.replace("-", "_")
    out = (
        RESULTS_DIR / f"{stem}.json"
        if default_results and not args.smoke
        else results.with_name(f"{results.stem}-{stem}.json")
    )
    tmp = out.with_name(out.stem + ".partial.json")
    tmp.unlink(missing_ok=True)
    cmd = [sys.executable, str(BENCHES / script), *(smoke_args if args.smoke else full_args), out_opt, str(tmp)]
    print(f"running {' '.join(shlex.quote(c) for c in cmd[1:])}", flush=True)
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    took = time.monotonic() - started
    if proc.returncode != 0 or not tmp.exists():
        tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        print(f"{extra} failed: {tail[-1] if tail else proc.returncode}", flush=True)
        return {"error": (tail[-1] if tail else f"exit code {proc.returncode}")[:300], "wall_s": took}
    tmp.replace(out)
    print(f"{extra}: {took / 60:.1f} min", flush=True)
    return {"result": json.loads(out.read_text()), "wall_s": took, "load_end": loadavg()}


# --------------------------------------------------------------------------------------------
# Estimate and comparison
# --------------------------------------------------------------------------------------------

#: Expected minutes of each extra in a full run, from their own loops (drop_in.py: 32 rows of at
#: least seven 1-s medians, and the clients' own sticky classes at 2100 members, 11-19 s a call, run
#: three times a row; broker_plugin.py: 30 scenarios, a JVM each with its input set-up and both
#: assignors, 8 s of warm-up and 3 s of interleaved calls).
EXTRA_MINUTES = {"drop-in": 8.0, "broker-plugin": 8.0, "decode": 1.0}


def _sampling_cost(m: float, contender: str, args) -> float:
    """Seconds of calls a cell spends under the run's sampling rule, for calls of ``m`` seconds."""
    if m > 1.0:  # the warm-up call is the first sample
        n = max(1, min(args.repeat, math.ceil(args.budget / m))) if args.budget > m else 1
        return n * m + (m if contender == "java" else 0.0)
    warm_for = args.java_warmup if contender == "java" else args.warmup
    warm = max(m, min(warm_for, 50 * m))
    n = max(min(args.repeat, max(1, math.ceil(args.budget / m))), min(200, math.ceil(args.min_time / m)))
    return warm + n * m


_SUPPORTS: dict[tuple[str, str], bool] = {}


def _supports(contender: str, strategy: str) -> bool:
    if (contender, strategy) not in _SUPPORTS:
        _SUPPORTS[(contender, strategy)] = C.python_supports(contender, strategy)
    return _SUPPORTS[(contender, strategy)]


def _cell_cost(old: dict, name: str, strategy: str, contender: str, args) -> tuple[float, str]:
    """Expected seconds of one cell from the same cell of an older run: its setup and process
    overhead as measured, its calls under this run's sampling rule; a cell without a time borrows
    the other round's, else assumes the cap is hit (pure Python) or its contender's slowest cell."""
    r = old.get(cell_key(name, strategy, contender))
    cap = call_cap(args, contender)

    def cost(r: dict) -> float:
        overhead = max(0.0, r["wall_s"] - sum(r.get("samples", [])) - sum(r.get("warmups", [])))
        if r["status"] == "ok":
            return overhead + _sampling_cost(min(r["median"], cap), contender, args)
        if r["status"] == "cap":  # its wall time holds the old cap's wait
            return max(0.0, overhead - r.get("cap_s", 60.0)) + cap
        return overhead

    if (r and r.get("status") == "unsupported") or (
        contender in C.PYTHON_CONTENDERS and not _supports(contender, strategy)
    ):
        return 0.0, "unsupported"
    if r and "wall_s" in r:
        return cost(r), "measured"
    if r and r.get("inferred_from"):
        return 0.0, "inferred"
    shape, rnd = name.split("/")
    other = old.get(cell_key(f"{shape}/{'fresh' if rnd == 'round2' else 'round2'}", strategy, contender))
    if other and "wall_s" in other:
        return cost(other), "other round"
    # The same cell on the nearest shape (by partition count) that has a time, as it is: the calls
    # grow with the shape, but the process and set-up overhead, most of a cell's time, grows far less.
    sizes = {sh.name: sh.size() for sh in S.grid_shapes()}
    p = sizes[shape][0]
    near = [
        (abs(math.log(sizes[sh][0] / p)), v)
        for sh in sizes
        if sh != shape and "wall_s" in (v := old.get(cell_key(f"{sh}/{rnd}", strategy, contender)) or {})
    ]
    if near:
        return cost(min(near, key=lambda x: x[0])[1]), "nearest shape"
    return cap + 30.0, "assumed capped"


def estimate(args, base: Path) -> int:
    planned, _, _ = plan(args)
    old = json.loads(base.read_text())["cells"] if base.exists() else {}
    by_contender: dict[str, float] = {}
    how: dict[str, int] = {}
    total = 0.0
    costs: list[tuple[float, str]] = []
    capped: set[tuple[str, str, str]] = set()  # (contender, strategy, round) over the cap on the N = P series
    for name, strategy, contender in planned:
        shape, rnd = name.split("/")
        r = old.get(cell_key(name, strategy, contender)) or {}
        if shape in NP_SHAPES and (contender, strategy, rnd) in capped:
            t, basis = 0.0, "inferred"  # the run infers it from the smaller scenario's cap
        else:
            t, basis = _cell_cost(old, name, strategy, contender, args)
        if shape in NP_SHAPES and (r.get("status") in ("cap", "mem") or r.get("median", 0) > call_cap(args, contender)):
            capped.add((contender, strategy, rnd))
        costs.append((t, basis))
        total += t
        by_contender[contender] = by_contender.get(contender, 0.0) + t
        how[basis] = how.get(basis, 0) + 1
    extras = sum(EXTRA_MINUTES[e] for e in args.extras)
    print(f"{len(planned)} cells; per-cell times from {base.relative_to(REPO) if base.is_relative_to(REPO) else base}")
    print("basis of each cell's estimate: " + ", ".join(f"{k} {v}" for k, v in sorted(how.items())))
    for c, t in sorted(by_contender.items(), key=lambda kv: -kv[1]):
        print(f"  {c:22s} {t / 60:6.1f} min")
    guessed = sum(t for t, basis in costs if basis in ("nearest shape", "other round", "assumed capped"))
    print(f"of which {guessed / 60:.0f} min for cells the old run has no time for (rough: see _cell_cost)")
    print(f"grid {total / 60:.0f} min + extras ({', '.join(args.extras) or 'none'}) {extras:.0f} min")
    print(f"expected total on a quiet machine: about {total / 60 + extras:.0f} min, plus about 15 s to write the")
    print("scenario files (once, cached in peers/.cache) and `make broker-plugin`'s build when not yet built")
    return 0


#: A cell is slower "beyond the noise" when its median grew by more than this factor and its
#: fastest call is slower than the old run's slowest (the two runs' spreads do not overlap).
NOISE_FACTOR = 1.25


def compare(old_path: Path, new_path: Path) -> int:
    """Print every cell both runs measured, old vs new median; flag the slower ones (exit 1)."""
    old = json.loads(old_path.read_text())["cells"]
    new = json.loads(new_path.read_text())["cells"]
    common = sorted(set(old) & set(new))
    worse, rows = [], []
    for key in common:
        o, n = old[key], new[key]
        if o.get("status") == "ok" and n.get("status") == "ok":
            ratio = n["median"] / o["median"]
            apart = min(n["samples"] or [n["median"]]) > max(o["samples"] or [o["median"]])
            cpu = ""
            if o.get("cpu_median") and n.get("cpu_median") and min(o["median"], n["median"]) >= 0.01:
                cpu = f"cpu {n['cpu_median'] / o['cpu_median']:.2f}x"
            flag = "SLOWER" if ratio > NOISE_FACTOR and apart else ""
            rows.append((key, fmt_time(o["median"]), fmt_time(n["median"]), f"{ratio:.2f}x", cpu, flag))
        elif o.get("status") == "ok" and n.get("status") in ("cap", "mem", "error"):
            flag = "SLOWER" if n.get("status") != "cap" or n.get("cap_s", 60) > o["median"] else "capped lower"
            rows.append((key, fmt_time(o["median"]), n["status"], "", "", flag))
        else:
            rows.append((key, o.get("status", "?"), n.get("status", "?"), "", "", ""))
        if rows[-1][-1] == "SLOWER":
            worse.append(rows[-1])
    print(f"{len(common)} cells in both {old_path.name} and {new_path.name}")
    print(f"{'cell':70s} {'old':>10s} {'new':>10s} {'new/old':>8s} {'':12s}")
    for r in rows:
        print(f"{r[0]:70s} {r[1]:>10s} {r[2]:>10s} {r[3]:>8s} {r[4]:12s} {r[5]}")
    print()
    print(
        f"{len(worse)} cells slower beyond the noise (median > {NOISE_FACTOR}x the old one and every new call "
        "slower than every old call)" + (":" if worse else ".")
    )
    for r in worse:
        print(f"  {r[0]}: {r[1]} -> {r[2]} {r[3]} {r[4]}")
    ours = [r for r in worse if depends_on_kassign(r[0].split("|")[2])]
    if worse:
        # The peers' code did not change between the runs: their slower cells measure the machine.
        print(f"of which kassign's own cells: {len(ours)}; the peers' (the machine's noise): {len(worse) - len(ours)}")
    return 1 if worse else 0


NP_SHAPES = {f"np-{n}" for n in S.NP_SERIES + S.NP_SERIES_SMOKE}


def _dominated_by_cap(
    cells: dict, sizes: dict, name: str, strategy: str, contender: str, commit: str | None = None
) -> str | None:
    shape, rnd = name.split("/")
    p, n = sizes[shape]
    for key, res in cells.items():
        sc, st, co = key.split("|")
        if st != strategy or co != contender or res.get("status") not in ("cap", "mem") or res.get("inferred_from"):
            continue
        if depends_on_kassign(co) and res.get("kassign_commit") != commit:
            continue
        sh2, rnd2 = sc.split("/")
        if rnd2 != rnd or sh2 not in sizes:
            continue
        # Only along the N = P series: across shapes, time is not monotone in size (Java's
        # constrained path on uniform subscriptions is far faster than its general path on the
        # same sizes with one odd member).
        if sh2 not in NP_SHAPES or shape not in NP_SHAPES:
            continue
        p2, n2 = sizes[sh2]
        if p2 <= p and n2 <= n:
            return sc
    return None


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def fmt_time(sec: float | None) -> str:
    if sec is None:
        return "n/a"
    if sec < 1e-3:
        return f"{sec * 1e6:.0f} µs"
    if sec < 1:
        return f"{sec * 1e3:.3g} ms"
    return f"{sec:.3g} s"


def fmt_ratio(r: float) -> str:
    if r >= 100:
        return f"{r:,.0f}×"
    if r >= 10:
        return f"{r:.0f}×"
    return f"{r:.2g}×"


def cell_text(res: dict | None, cap: float, base: float | None, base_cpu: float | None = None) -> str:
    if res is None:
        return ""
    st = res.get("status")
    if st == "unsupported":
        return "n/a"
    if st == "cap":
        return f"> {res.get('cap_s', cap):g} s" + (" (inf.)" if res.get("inferred_from") else "")
    if st == "mem":
        return "> mem"
    if st == "error":
        err = res.get("error", "")
        short = err.split(":")[0].split(".")[-1].strip() or "error"
        return f"error ({short[:30]})"
    med = res["median"]
    txt = fmt_time(med)
    q = res.get("quality") or {}
    if q and not q.get("valid", True):
        txt += " INVALID"
    if base:
        txt += f" ({fmt_ratio(med / base)}"
        # CPU ratios only where calls are long enough for the JVM's CPU clock (10 ms granularity).
        if base_cpu and res.get("cpu_median") and med >= 0.01:
            txt += f"; cpu {fmt_ratio(res['cpu_median'] / base_cpu)}"
        txt += ")"
    return txt


def slope(points: list[tuple[float, float]]) -> float | None:
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def growth(
    data: dict, contender: str, strategy: str, rnd: str = "fresh", cpu: bool = False
) -> tuple[float | None, list[tuple[int, float]]]:
    pts = []
    for shape, n in sorted(data["meta"]["np"].items(), key=lambda kv: kv[1]):
        res = data["cells"].get(cell_key(f"{shape}/{rnd}", strategy, contender))
        if res and res.get("status") == "ok":
            if not cpu:
                pts.append((n, res["median"]))
            elif res.get("cpu_median") and (contender != "java" or res["median"] >= 0.01):
                # The JVM's process CPU clock ticks in 10 ms: shorter Java calls have no CPU reading.
                pts.append((n, res["cpu_median"]))
    return slope(pts), pts


def plot(data: dict, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cap = data["meta"]["cap_s"]
    colors = {c: plt.get_cmap("tab10")(i % 10) for i, c in enumerate(C.ALL_CONTENDERS)}
    fig, axes = plt.subplots(2, 2, figsize=(12, 9), sharex=True)
    for ax, strategy in zip(axes.flat, C.STRATEGIES):
        for contender in C.ALL_CONTENDERS:
            k, pts = growth(data, contender, strategy)
            # Cells past the cap (or the memory limit) are drawn on the cap line as "^", not dropped.
            over = [
                n
                for shape, n in data["meta"]["np"].items()
                if (data["cells"].get(cell_key(f"{shape}/fresh", strategy, contender)) or {}).get("status")
                in ("cap", "mem")
            ]
            if not pts and not over:
                continue
            label = contender + (f" (slope {k:.2f})" if k is not None else "") + (" ^ = over cap" if over else "")
            style = "-o" if contender.startswith("kassign") else "--s"
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, style, label=label, markersize=4, color=colors[contender])
                label = None
            if over:
                ax.plot(sorted(over), [cap] * len(over), "^", color=colors[contender], markersize=7, label=label)
        ax.axhline(cap, color="grey", linewidth=0.8, linestyle=":")
        ax.text(ax.get_xlim()[0] if ax.lines else 100, cap * 1.1, f"cap {cap:g} s", fontsize=7, color="grey")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{strategy}: N members = N partitions, 1 topic, fresh")
        ax.set_xlabel("N")
        ax.set_ylabel("median seconds per assign call")
        ax.grid(True, which="both", linewidth=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    fig.suptitle(
        f"kassign benchmarks, N = P series ({data['meta']['machine']['cpu']}, "
        f"{data['meta']['machine']['cores']} cores)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


#: kassign's own entry points (same Rust code); kassign-reference is a separate, pure-Python engine.
KASSIGN_ITSELF = (
    "kassign",
    "kassign-owners",
    "kassign-core",
    "kassign-wire",
    "kassign-protocol",
    "kassign-kafka-python",
    "kassign-aiokafka",
)

#: Peers that take the leader's input as bytes (decode every member's metadata, assign, and for
#: franz-go encode the assignments): their counterpart is kassign's wire path.
WIRE_PEERS = ("franz-go",)


def _loss_reason(sc: str, st: str, c: str, r: dict, base: dict | None, cells: dict) -> str:
    """Why a loss row is there, from the cells themselves."""
    wire = cells.get(cell_key(sc, st, "kassign-wire"))
    core = cells.get(cell_key(sc, st, "kassign-core"))
    if base is None:
        return "kassign failed on this cell (see the table above)"
    if base.get("cpu_median") and r.get("cpu_median") and r["cpu_median"] >= base["cpu_median"] and r["median"] >= 0.01:
        return "load: kassign used less CPU than the contender; the wall-time gap is the shared machine's"
    if c in WIRE_PEERS and wire and wire.get("status") == "ok" and wire["median"] <= r["median"]:
        return (
            f"not on the contender's own terms: its call takes bytes and gives bytes, and kassign's wire path "
            f"(`kassign-wire`, {fmt_time(wire['median'])}) is faster; `kassign.assign` also builds "
            f"Python objects for every partition"
        )
    if core and core.get("status") == "ok" and core["median"] <= r["median"]:
        return (
            f"Python objects: the core call on ready members (`kassign-core`, {fmt_time(core['median'])}) is "
            f"faster; the rest is `Member`/`TopicPartition` objects that a Python caller hands over and gets back"
        )
    return "unexplained: kassign's own path is slower here"


def render_server(data: dict, w: Any) -> None:
    """The KIP-848 section: server-uniform / server-range vs the broker's own classes."""
    cells = data["cells"]
    meta = data["meta"]
    cap = meta["cap_s"]
    if not any(k.split("|")[1] in C.SERVER_STRATEGIES for k in cells):
        return

    def get(sc: str, st: str, c: str) -> dict | None:
        return cells.get(cell_key(sc, st, c))

    def ok(r: dict | None) -> bool:
        return bool(r) and r.get("status") == "ok"

    def ratio(r: dict | None, b: dict | None) -> str:
        if not (ok(r) and ok(b)):
            return ""
        txt = fmt_ratio(r["median"] / b["median"])
        if r.get("cpu_median") and b.get("cpu_median") and r["median"] >= 0.01:
            txt += f" (cpu {fmt_ratio(r['cpu_median'] / b['cpu_median'])})"
        return txt

    w("## Broker-side assignors (KIP-848): server-uniform and server-range")
    w("")
    w(
        "kassign's `server-uniform` / `server-range` (docs/server_assignors.md) against the broker's own "
        "`UniformAssignor` / `RangeAssignor` from `org.apache.kafka:kafka-group-coordinator` "
        f"{meta.get('versions', {}).get('kafka-clients (Java)', '')} (`java`: only `assign(groupSpec, describer)` "
        "is timed, on a `GroupSpecImpl` built once the way the coordinator's `TargetAssignmentBuilder` "
        "builds it; peers/java/.../ServerBench.java). `kassign-core` is the extension call "
        "`kassign._core.assign` alone and `kassign` is `kassign.assign` end to end; both take Python "
        "objects in and give Python objects out, one `TopicPartition` per partition. `kassign-owners` is "
        "`kassign.assign_owners` end to end: the same assignment as one owner array per topic "
        "(`kassign.Owners`), with no Python object per partition. Round 2: `owned` is each member's current target "
        "assignment. Ratios: Java time / kassign "
        "time (above 1×: kassign faster). Load average at each cell is in benches/results/full.json. "
        "The Rust core alone (no Python objects) against the same Java cells: docs/server_assignors.md, "
        "Performance."
    )
    w("")
    scenarios = sorted(
        {k.split("|")[0] for k in cells if k.split("|")[1] in C.SERVER_STRATEGIES},
        key=lambda sc: (meta["sizes"].get(sc.split("/")[0], [0, 0])[0], sc),
    )
    goals = []
    for st in C.SERVER_STRATEGIES:
        w(f"### {st}")
        w("")
        w(
            "| scenario | partitions | members | `kassign-core` | `kassign` | `kassign-owners` | `java` assign() "
            "| java / core | java / kassign | java / kassign-owners |"
        )
        w("|---|---|---|---|---|---|---|---|---|---|")
        for sc in scenarios:
            core, kas, own, java = (get(sc, st, c) for c in ("kassign-core", "kassign", "kassign-owners", "java"))
            if not any((core, kas, own, java)):
                continue
            p, n = meta["sizes"].get(sc.split("/")[0], [0, 0])
            text = [cell_text(r, cap, None) if r else "" for r in (core, kas, own, java)]
            w(
                f"| {sc} | {p:,} | {n:,} | {' | '.join(text)} | "
                f"{ratio(java, core)} | {ratio(java, kas)} | {ratio(java, own)} |"
            )
            if p >= 1_000_000 and ok(java):
                core_ok = ok(core) and java["median"] >= 3 * core["median"]
                kas_ok = ok(kas) and kas["median"] <= java["median"]
                own_ok = ok(own) and own["median"] <= java["median"]
                goals.append(
                    f"{sc} {st}: `kassign-core` {'≥' if core_ok else '**<**'} 3× faster than Java "
                    f"({ratio(java, core) or 'n/a'}); kassign.assign end to end "
                    f"{'no slower than' if kas_ok else '**slower than**'} Java's assign() "
                    f"({ratio(java, kas) or 'n/a'}); kassign.assign_owners end to end "
                    f"{'no slower than' if own_ok else '**slower than**'} Java's assign() "
                    f"({ratio(java, own) or 'n/a'})"
                )
        w("")
    if goals:
        w(
            "Goals on the 1M-partition shapes (Rust core ≥ 3× faster than Java's `assign()`; "
            "kassign end to end, Python objects included, no slower than Java's `assign()` alone: "
            "`kassign.assign` makes a `TopicPartition` per partition, `kassign.assign_owners` an owner "
            "array per topic). `kassign-core` is "
            "the extension call, Python objects in and out; the Rust core alone, with no Python "
            "object, is timed by `cargo bench --bench core` (docs/server_assignors.md, "
            '"Performance"):'
        )
        w("")
        for g in goals:
            w(f"- {g}")
        w("")


def extra_result(data: dict, extra: str) -> dict | None:
    """An extra's JSON from this run, else (a full report) its file in benches/results/."""
    got = (data.get("extras") or {}).get(extra)
    if got:
        return got.get("result")
    if data["meta"].get("mode") == "smoke":
        return None
    path = RESULTS_DIR / f"{extra.replace('-', '_')}.json"
    return json.loads(path.read_text()) if path.exists() else None


#: The headline table's groups: (scenario, label, strategies).
HEADLINE_ROWS = (
    ("np-2100/fresh", "2100 × 2100, fresh", C.STRATEGIES),
    ("np-2100/round2", "2100 × 2100, round 2", C.STRATEGIES),
    ("java-large-uniform/fresh", "1M partitions, 2000 members, fresh", ("sticky", "cooperative-sticky")),
    ("java-large-uniform/round2", "1M partitions, 2000 members, round 2", ("sticky", "cooperative-sticky")),
)


def render_headline(data: dict, w: Callable[[str], None]) -> None:
    """One screen: kassign against franz-go, Java and the Python clients on the shapes users ask about."""
    cells = data["cells"]
    cap = data["meta"]["cap_s"]

    def fig(sc: str, st: str, c: str, base: str | None = None) -> str:
        r = cells.get(cell_key(sc, st, c))
        if r is None:
            return "left out" if left_out(sc, st, c) else "not run"
        if r.get("status") != "ok":
            return cell_text(r, cap, None)
        txt = fmt_time(r["median"])
        b = cells.get(cell_key(sc, st, base)) if base else None
        if b and b.get("status") == "ok":
            txt += f" ({fmt_ratio(r['median'] / b['median'])})"
        return txt

    w("## Headlines")
    w("")
    w(
        "Median wall time of one leader assignment; in brackets the contender's time over kassign's counterpart "
        "(above 1×: kassign faster). Java's `assign()` is compared with `kassign.assign` (objects in, objects "
        "out); franz-go (decode, balance, `IntoSyncAssignment`: bytes in, bytes out) with `assign_wire`; each "
        "client's own classes with kassign's drop-in class for that client, both up to the SyncGroup bytes."
    )
    w("")
    w(
        "| group | strategy | `kassign.assign` | Java | `assign_wire` | franz-go | kassign for kafka-python "
        "| kafka-python | kassign for aiokafka | aiokafka |"
    )
    w("|---|---|---|---|---|---|---|---|---|---|")
    for sc, label, strategies in HEADLINE_ROWS:
        if not any(k.startswith(sc + "|") for k in cells):
            continue
        for st in strategies:
            row = [
                fig(sc, st, "kassign"),
                fig(sc, st, "java", "kassign"),
                fig(sc, st, "kassign-wire"),
                fig(sc, st, "franz-go", "kassign-wire"),
                fig(sc, st, "kassign-kafka-python"),
                fig(sc, st, "kafka-python", "kassign-kafka-python"),
                fig(sc, st, "kassign-aiokafka"),
                fig(sc, st, "aiokafka", "kassign-aiokafka"),
            ]
            w(f"| {label} | {st} | " + " | ".join(row) + " |")
    w("")
    drop_in = extra_result(data, "drop-in")
    for client in ("kafka-python", "aiokafka"):
        for r in (drop_in or {}).get("rows", []):
            if (r["client"], r["members"], r["round"], r["strategy"]) != (client, 2100, 1, "sticky"):
                continue
            k, d, c = r.get("kassign_end_to_end_s"), r.get("kassign_decode_s"), r.get("client_end_to_end_s")
            if k and c:
                w(
                    f"- {client} leader, end to end (its decode of 2100 members' metadata, assign, encode), sticky, "
                    f"fresh: kassign's class {fmt_time(k)}, its own {fmt_time(c)} ({fmt_ratio(c / k)})"
                    + (f"; {fmt_time(d)} of kassign's figure is {client}'s own decode." if d else ".")
                )
    plugin = extra_result(data, "broker-plugin")
    for r in (plugin or {}).get("rows", []):
        if r["scenario"] == "java-large-uniform/round2":
            w(
                f"- Broker plugin (KIP-848), 1M partitions, round 2, inside the broker's JVM: kassign "
                f"{fmt_time(r['kassign_wall'])}, the broker's `uniform` {fmt_time(r['uniform_wall'])}."
            )
    w("")


def render(data: dict, md_path: Path, png_link: str | None) -> None:
    meta = data["meta"]
    cells = data["cells"]
    cap = meta["cap_s"]
    contenders = [
        c
        for c in C.ALL_CONTENDERS
        if any(k.endswith("|" + c) and v.get("status") != "unsupported" for k, v in cells.items())
    ]
    L: list[str] = []
    w = L.append
    w("# Benchmarks" + (" (smoke run: tiny sizes, not for conclusions)" if meta["mode"] == "smoke" else ""))
    w("")
    if meta["mode"] == "smoke":
        w("Generated by `make bench-smoke` (`.venv/bin/python benches/run_all.py --smoke`).")
    else:
        w(
            "**Regenerate this file and `benches/np_series.png` with one command: `make bench-full`** "
            "(= `.venv/bin/python benches/run_all.py` after `make broker-plugin`: builds the Java and Go "
            "harnesses from `peers/`, runs every cell of the grid, then `benches/drop_in.py` and "
            "`benches/broker_plugin.py`, and writes `benches/results/full.json`, this file and the plot; "
            "`benches/run_all.py --estimate` prints how long it takes). `make bench-full ARGS=--resume` keeps "
            "cells already in `benches/results/full.json` (peer cells always; kassign's own only if measured "
            "on the same kassign commit); `--render-only` rewrites this file from the JSON; `--compare "
            "OLD.json` lists the cells slower than in an older run."
        )
    w("")
    w(
        "Every number below was measured by those commands on the machine described here; nothing is "
        "copied from elsewhere."
    )
    w("")
    runs = data.get("meta_runs") or [meta]
    r = runs[-1]
    w(
        f"- Run {r.get('started')} → {r.get('finished', 'unfinished')}: `{r.get('command')}`; load average "
        f"(1/5/15 min) {r.get('load_start')} at start, {r.get('load_end', '?')} at end"
        + (
            f" (it resumed {len(runs) - 1} earlier runs' cells; all runs are listed in the results JSON)."
            if len(runs) > 1
            else "."
        )
    )
    m = meta["machine"]
    w(f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM, {m['os']}, CPython {m['python']}.")
    w(
        "- The machine is shared with other engineers' builds and tests, and the benchmark runs at `nice "
        "-n 10` so as not to crowd them out; wall times therefore carry load noise (the load average "
        "of the runs is listed above; each cell records its own in the results JSON). Every call also "
        "records process CPU time, shown as `cpu` where calls are long enough (≥ 10 ms) to read it."
    )
    commits = sorted(
        {
            v.get("kassign_commit")
            for k, v in cells.items()
            if k.split("|")[2].startswith("kassign") and v.get("kassign_commit")
        }
    )
    if commits:
        w(
            "- kassign cells were measured on kassign code commit(s) "
            + ", ".join(f"`{c}`" for c in commits)
            + " (the last commit touching rust/, python/ or the build files; `+dirty` = with uncommitted "
            "changes in the shared checkout at the time; `ext` = when the compiled extension was built)."
        )
    w("- Versions: " + "; ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".")
    if meta.get("unavailable"):
        w("- Unavailable: " + "; ".join(f"{k}: {v}" for k, v in meta["unavailable"].items()))
    w("")
    render_headline(data, w)
    w("## Method")
    w("")
    w(
        f"- One process per (scenario, strategy, contender), run one at a time. Inputs are built first "
        "(not timed) the way each library's group leader receives them; then the assign call alone is "
        "timed. Python contenders: at least one warm-up call (a warm-up slower than 1 s counts as a "
        f"sample), then at least {meta['repeat']} samples unless {meta['budget_s']:g} s are spent (more, up "
        f"to 200, while the sampling loop has run under {meta.get('min_time_s', 1.0):g} s; a call longer "
        "than that is not repeated for it). Before each sample the process collects its garbage, after "
        "freezing the set-up's objects out of the collector's reach (`gc.freeze()`), so each call starts "
        "with nothing pending and with the caches it reads not flushed by a walk of the whole heap; the "
        "call's own collections run in it. Each cell's sample count and samples are in the results JSON. "
        "Java: JIT warm-up of at least one "
        "call and up to a few seconds, then the same sampling. franz-go: the same. Figures are medians. Java runs "
        "with `-Xmx10g -XX:+UseParallelGC`."
    )
    w("- `not run` = the cell was not measured (a run cut short; `--resume` fills it in).")
    w(
        "- Left out of the default run (runnable by naming them in `--contenders`), because they add nothing a "
        "reader needs here: `kassign-protocol` (0.1's leader route through Python objects, superseded by "
        "`kassign-wire` and the drop-in classes), and on the classic strategies `kassign-owners` and "
        "`kassign-core` (the same core call as `kassign` in another form; both are timed on the server-* "
        "strategies). The pure-Python contenders (kafka-python, aiokafka, kassign-reference) and the drop-in "
        "classes leave out the 1M-partition shapes: the clients' own encode and decode of 2000 members' "
        "500-topic metadata takes most of a minute a cell there, and the clients' sticky assignors already "
        "exceed the cap at 10,000 partitions, so the drop-in classes would have nothing to face. "
        "The server-* strategies run on the 1M shapes and the N = P series from N = 2100. "
        "On the N = P series, round 2 runs only at N = 2100 (the growth exponents and the plot "
        "use fresh groups; every other shape has both rounds). Such cells read `left out`."
    )
    w(
        f"- Cap: a single call running past {cap:g} s ({meta.get('python_cap_s', cap):g} s for the pure-Python "
        f"contenders) is killed and reported `> {cap:g} s`. "
        "`(inf.)` = not run because the same contender and strategy already exceeded the cap on a smaller "
        "scenario of the N = P series, same round (only there: across shapes time is not monotone in size). "
        f"Python contenders run under a {meta['memory_gb']:g} GiB address-space limit (`> mem`). "
        "`n/a` = the contender has no such strategy (for kassign: not in this build's `kassign.STRATEGIES`; "
        "for `kassign-reference`: not in `kassign_reference` or that module absent). "
        "`error (...)` = the contender raised (for example kafka-python's roundrobin KeyError on unequal "
        "subscriptions)."
    )
    w(
        "- Ratios in brackets are contender time / `kassign` time (end-to-end `kassign.assign`): above 1× "
        "kassign is faster, below 1× kassign is slower."
    )
    w(
        "- Contenders: "
        + "; ".join(
            f"`{c}` = {C.PYTHON_CONTENDERS[c][1] if c in C.PYTHON_CONTENDERS else C.PEER_CONTENDERS[c]}"
            for c in contenders
        )
        + "."
    )
    w(
        "- Scenarios (peers/scenarios.py, seeded): each shape fresh (nobody owns anything) and round 2 "
        "(every member but one resubmits its round-1 partitions at generation 1; the first member "
        "rejoins with no history). Sticky history reaches each library the way its members send it: "
        "sticky user data for eager sticky, owned partitions + generation for cooperative-sticky."
    )
    w(
        "- Quality (same cells): `spread` = max - min partitions per member; `topic` = the largest "
        "max - min of one topic's partitions over its subscribers; `moves` = previously owned "
        "partitions that changed owner or were withheld, vs the lower bound `lb` = sum(h_i) - kept* "
        "(docs/oracles.md, Stickiness; uniform subscriptions only); `unassigned` = partitions nobody got "
        "(cooperative withholding)."
    )
    w("")

    w("## Goals and details")
    w("")
    w(
        "Each figure: median wall time per `assign` call, then in brackets the ratio contender / kassign "
        "(above 1×: kassign faster). `cpu` = the same on process CPU time, which a loaded machine "
        "inflates far less than wall time (see Method; each cell's load average is in the results JSON), so "
        "where wall and CPU ratios differ, the CPU ratio is the fairer one; for Java and franz-go it "
        "counts all threads (GC, JIT), which favours kassign less than wall time on an idle machine would. "
        "The 2100 × 2100 figures of every contender are in the headline table and under All results."
    )
    w("")
    kas = lambda sc, st: cells.get(cell_key(sc, st, "kassign"))  # noqa: E731

    def ok(r):
        return bool(r) and r.get("status") == "ok"

    def vs(r, base):
        """'1.2 s (3,000×; cpu 2,900×)' for a contender cell r against kassign's cell base."""
        if not ok(r):
            return cell_text(r, cap, None) if r else "not run"
        txt = fmt_time(r["median"])
        if ok(base):
            txt += f" ({fmt_ratio(r['median'] / base['median'])}"
            if r.get("cpu_median") and base.get("cpu_median") and r["median"] >= 0.01:
                txt += f"; cpu {fmt_ratio(r['cpu_median'] / base['cpu_median'])}"
            if r["median"] < base["median"]:
                txt += ", **kassign slower**"
            txt += ")"
        return txt

    def pending(base):
        if base and base.get("status") == "unsupported":
            return "n/a (not in this kassign build: pending)"
        return cell_text(base, cap, None) if base else "not run yet (pending)"

    np2100 = next((s for s, n in meta["np"].items() if n == 2100), None)
    if np2100:
        sc = f"{np2100}/fresh"
        base = kas(sc, "sticky")
        r = cells.get(cell_key(sc, "sticky", "kafka-python"))
        if ok(base) and ok(r):
            ratio = r["median"] / base["median"]
            cpu_ratio = (
                (r["cpu_median"] / base["cpu_median"]) if r.get("cpu_median") and base.get("cpu_median") else None
            )
            low = min(ratio, cpu_ratio) if cpu_ratio else ratio
            met = "met" if low >= 3000 else "**not met**"

            def load1(cell):
                return (cell.get("load") or "?").split()[0]

            w(
                f"- **KAFKA-9987 shape (2100 members × 2100 partitions, fresh), sticky: kassign "
                f"{fmt_time(base['median'])} vs kafka-python {fmt_time(r['median'])} = {fmt_ratio(ratio)}**"
                + (f" (cpu {fmt_ratio(cpu_ratio)})" if cpu_ratio else "")
                + f"; goal ≥ 3000× (judged on the lower of the two ratios): {met}. Load average when measured: "
                f"kassign {load1(base)}, kafka-python {load1(r)}."
            )
        else:
            w(
                f"- KAFKA-9987 shape (2100 × 2100, fresh), sticky: kassign {pending(base)}; "
                f"kafka-python {cell_text(r, cap, None) if r else 'not run'}."
            )
    big = [s for s in ("java-large-uniform", "java-large-imbalance") if s in meta["sizes"]]
    for shape in big:
        w("")
        w(
            f"{shape} ({meta['sizes'][shape][0]:,} partitions, {meta['sizes'][shape][1]:,} members; goal: kassign "
            "faster than Java and franz-go):"
        )
        w("")
        w("| round | strategy | kassign | java | franz-go | verdict |")
        w("|---|---|---|---|---|---|")
        for rnd in ("fresh", "round2"):
            for st in C.STRATEGIES:
                base = kas(f"{shape}/{rnd}", st)
                row, verdicts = [], []
                for c in ("java", "franz-go"):
                    r = cells.get(cell_key(f"{shape}/{rnd}", st, c))
                    row.append(vs(r, base))
                    if ok(r) and ok(base):
                        if base["median"] < r["median"]:
                            verdicts.append(f"faster than {c}")
                        else:
                            verdicts.append(f"**slower than {c}**")
                    elif r and r.get("status") in ("cap", "mem", "error") and ok(base):
                        verdicts.append(f"{c} did not finish")
                kt = fmt_time(base["median"]) if ok(base) else pending(base)
                if ok(base) and base.get("cpu_median") and base["median"] >= 0.01:
                    kt += f" (cpu {fmt_time(base['cpu_median'])})"
                w(f"| {rnd} | {st} | {kt} | " + " | ".join(row) + f" | {', '.join(verdicts) or '—'} |")
    w("")
    w(
        "Growth exponent (least-squares slope of log time vs log N on the N = P series, fresh; wall time, "
        "CPU time in brackets; points that hit the cap are left out, so a capped contender's slope "
        "understates its growth). Goal for kassign: ≤ 1.1."
    )
    w("")
    for st in ("sticky", "cooperative-sticky"):
        k, pts = growth(data, "kassign", st)
        kc, _ = growth(data, "kassign", st, cpu=True)
        kp, ptp = growth(data, "kafka-python", st)
        if k is None:
            w(f"- kassign {st}: no N = P points yet (pending).")
            continue
        verdict = "met" if k <= 1.1 else ("met on CPU time only" if kc is not None and kc <= 1.1 else "**not met**")
        w(
            f"- kassign {st}: exponent {k:.2f} on wall time"
            + (f", {kc:.2f} on CPU time" if kc is not None else "")
            + f" (N {pts[0][0]}–{pts[-1][0]}); goal ≤ 1.1: {verdict}. kafka-python {st}: "
            + (f"{kp:.2f} (N {ptp[0][0]}–{ptp[-1][0]}; larger N over the cap)." if kp is not None else "no points.")
        )
    w("")
    w("| contender | " + " | ".join(C.STRATEGIES) + " |")
    w("|---|" + "---|" * len(C.STRATEGIES))
    for c in contenders:
        row = []
        for st in C.STRATEGIES:
            k, pts = growth(data, c, st)
            kc, _ = growth(data, c, st, cpu=True)
            row.append(
                ""
                if k is None
                else f"{k:.2f}" + (f" ({kc:.2f})" if kc is not None else "") + f", N {pts[0][0]}–{pts[-1][0]}"
            )
        if any(row):
            w(f"| {c} | " + " | ".join(row) + " |")
    w("")
    if png_link is not None:
        w(f"![time vs group size, N = P series]({png_link})")
        w("")

    render_server(data, w)
    # The leader's wire path
    wire_rows = []
    for key, res in cells.items():
        sc, st, c = key.split("|")
        if c == "kassign-wire" and res.get("status") == "ok":
            wire_rows.append((sc, st, res))
    if wire_rows:
        # A peer column is shown when at least one of its cells ran (kassign-protocol is left out of
        # the default run: a column of "left out" tells a reader nothing).
        wire_peers = [
            c
            for c in ("kassign-protocol", "franz-go", "java")
            if any(cell_key(sc, st, c) in cells for sc, st, _ in wire_rows)
        ]
        w("## The leader's wire path: bytes in, bytes out")
        w("")
        w(
            "What a group leader does with the JoinGroup response: decode every member's subscription "
            "bytes, assign, encode every member's assignment. `kassign-wire` = "
            "`kassign.protocol.assign_wire` (all in Rust, GIL released); "
            + (
                "`kassign-protocol` = the same job through 0.1's Python API (decode, `kassign.assign`, "
                "encode per member); "
                if "kassign-protocol" in wire_peers
                else ""
            )
            + "franz-go = "
            "`MemberBalancer` (decodes) + `Balance` + `IntoSyncAssignment` (encodes); Java = "
            "`assign(cluster, groupSubscription)` on already decoded subscriptions (its decoding and "
            "encoding are not in the call). Ratios: contender / `kassign-wire` (above 1×: kassign faster)."
        )
        w("")
        w("| scenario | strategy | kassign-wire | " + " | ".join(wire_peers) + " |")
        w("|---|---|---" + "|---" * len(wire_peers) + "|")
        for sc, st, res in sorted(wire_rows, key=lambda x: (x[0], x[1])):
            row = [fmt_time(res["median"])]
            for c in wire_peers:
                r = cells.get(cell_key(sc, st, c))
                if r and r.get("status") == "ok":
                    row.append(f"{fmt_time(r['median'])} ({fmt_ratio(r['median'] / res['median'])})")
                elif r:
                    row.append(cell_text(r, cap, None))
                else:
                    row.append("left out" if left_out(sc, st, c) else "not run")
            w(f"| {sc} | {st} | " + " | ".join(row) + " |")
        w("")

    d = extra_result(data, "drop-in")
    if d:
        import drop_in

        w("## The drop-in classes' leader step")
        w("")
        w(
            f"`{d['command']}` (load average {', '.join(f'{x:.1f}' for x in d['load'])}): kassign's "
            "kafka-python and aiokafka classes against the same client's own classes, timed as the client's "
            "coordinator runs them, on 1 topic of N partitions and N members (fresh; round 2: every member "
            "sends its round-1 assignment as history). See docs/adapters.md."
        )
        w("")
        w(drop_in.tables(d["rows"]))
        w("")

    d = extra_result(data, "decode")
    if d:
        w("## Decoding subscriptions into Python objects")
        w("")
        w(
            f"`{d['command']}`: {d['members']} ConsumerProtocolSubscription v3 payloads ("
            f"{d['bytes'] / 1e6:.1f} MB; 500 topics and 500 owned partitions each) decoded into Python "
            f"objects, all of them per run, median of {d['runs']} runs; load average "
            f"{', '.join(f'{x:.1f}' for x in d['load'])}."
        )
        w("")
        w("| decoder | time | kafka-python / kassign |")
        w("|---|---|---|")
        w(f"| `kassign.protocol.decode_subscription` | {fmt_time(d['kassign_median_s'])} | |")
        w(
            f"| kafka-python `ConsumerProtocolSubscription.decode` | {fmt_time(d['kafka_python_median_s'])} | "
            f"{fmt_ratio(d['ratio'])} |"
        )
        w("")

    render_broker_plugin(extra_result(data, "broker-plugin"), w)

    # Where kassign loses
    losses = []
    for key, res in cells.items():
        sc, st, c = key.split("|")
        if c in KASSIGN_ITSELF or res.get("status") != "ok":
            continue
        base = kas(sc, st)
        if base and base.get("status") == "ok" and res["median"] < base["median"]:
            losses.append((sc, st, c, res, base))
        elif base and base.get("status") in ("cap", "mem", "error"):
            losses.append((sc, st, c, res, None))
    w("## Where kassign loses")
    w("")
    if not losses:
        w("Nowhere in this run: in every cell where kassign has the strategy, no other contender has a lower median.")
    else:
        w(
            "Cells where another contender's median wall time is lower than `kassign`'s (end to end), with "
            "the CPU-time medians beside them (on this shared machine a small wall-time gap can be load; "
            "`cpu` says whether kassign also used more CPU):"
        )
        w("")
        w("| scenario | strategy | contender | contender | kassign | contender cpu | kassign cpu | why |")
        w("|---|---|---|---|---|---|---|---|")

        def fc(x):
            return fmt_time(x) if x else ""

        for sc, st, c, r, b in sorted(losses, key=lambda x: x[:3]):
            w(
                f"| {sc} | {st} | {c} | {fmt_time(r['median'])} | {fmt_time(b['median']) if b else 'failed'} | "
                f"{fc(r.get('cpu_median'))} | {fc((b or {}).get('cpu_median'))} | "
                f"{_loss_reason(sc, st, c, r, b, cells)} |"
            )
    qual_losses = []
    for key, res in cells.items():
        sc, st, c = key.split("|")
        q = res.get("quality")
        base = kas(sc, st)
        bq = (base or {}).get("quality")
        if c in KASSIGN_ITSELF or not q or not bq:
            continue
        if (
            q["spread"] < bq["spread"]
            or q["topic_spread"] < bq["topic_spread"]
            or (q.get("moves") is not None and bq.get("moves") is not None and q["moves"] < bq["moves"])
        ):
            qual_losses.append((sc, st, c, q, bq))
    if qual_losses:
        w("")
        w("Cells where another contender's quality beats kassign's on some column (spread / topic / moves):")
        w("")
        w("| scenario | strategy | contender | contender spread/topic/moves | kassign spread/topic/moves |")
        w("|---|---|---|---|---|")
        for sc, st, c, q, bq in sorted(qual_losses, key=lambda x: x[:3]):
            w(
                f"| {sc} | {st} | {c} | {q['spread']}/{q['topic_spread']}/{q.get('moves')} | "
                f"{bq['spread']}/{bq['topic_spread']}/{bq.get('moves')} |"
            )
    w("")

    # Per-shape tables
    w("## All results")
    w("")
    shapes = list(meta["sizes"])
    for shape in shapes:
        p, n = meta["sizes"][shape]
        if not any(k.startswith(shape + "/") for k in cells):
            continue
        w(f"### {shape}: {meta['descriptions'][shape]} — {p:,} partitions, {n:,} members")
        w("")
        w("| round | strategy | " + " | ".join(f"`{c}`" for c in contenders) + " |")
        w("|---|---|" + "---|" * len(contenders))
        for rnd in ("fresh", "round2"):
            for st in C.STRATEGIES:
                base = kas(f"{shape}/{rnd}", st)
                bmed = base["median"] if base and base.get("status") == "ok" else None
                bcpu = base.get("cpu_median") if bmed else None
                row = []
                for c in contenders:
                    r = cells.get(cell_key(f"{shape}/{rnd}", st, c))
                    if c == "kassign" and r and r.get("status") == "unsupported":
                        row.append("n/a (pending)")
                    elif r is None:
                        row.append("left out" if left_out(f"{shape}/{rnd}", st, c) else "not run")
                    else:
                        row.append(cell_text(r, cap, None if c == "kassign" else bmed, bcpu))
                if any(x not in ("", "n/a", "not run", "left out") for x in row):
                    w(f"| {rnd} | {st} | " + " | ".join(row) + " |")
        w("")
        w("Quality (spread / topic / moves vs lb / unassigned):")
        w("")
        w("| round | strategy | " + " | ".join(f"`{c}`" for c in contenders) + " |")
        w("|---|---|" + "---|" * len(contenders))
        for rnd in ("fresh", "round2"):
            for st in C.STRATEGIES:
                row = []
                for c in contenders:
                    r = cells.get(cell_key(f"{shape}/{rnd}", st, c)) or {}
                    q = r.get("quality")
                    if not q:
                        row.append("")
                        continue
                    mv = (
                        ""
                        if q.get("moves") is None
                        else f" / {q['moves']}" + (f" vs {q['moves_lb']}" if q.get("moves_lb") is not None else "")
                    )
                    un = f" / {q['unassigned']}u" if q.get("unassigned") else ""
                    row.append(("INVALID " if not q["valid"] else "") + f"{q['spread']} / {q['topic_spread']}{mv}{un}")
                if any(row):
                    w(f"| {rnd} | {st} | " + " | ".join(row) + " |")
        w("")
    md_path.write_text("\n".join(L) + "\n")


def render_broker_plugin(d: dict | None, w: Callable[[str], None]) -> None:
    """The broker plugin section, from benches/broker_plugin.py's JSON."""
    if not d:
        return
    w("## The broker plugin: `kassign` vs `uniform` inside the broker's JVM")
    w("")
    w(
        f"`{d['command']}`: the broker's `UniformAssignor` and kassign's `KassignAssignor` "
        "(`dist/kassign-broker-<version>.jar`, docs/broker.md) on the coordinator's own input classes "
        "(`GroupSpecImpl`, `SubscribedTopicDescriberImpl`), `assign()` timed whole: for kassign the "
        "conversions to flat arrays, the JNI call into the Rust core and the result maps. One JVM per "
        "scenario holds one instance of each assignor, reused across calls as a broker does; calls "
        "alternate between the two after a warm-up of both (the seconds given and at least 50 calls of "
        "each), so load on the shared machine falls on both "
        "alike. Wall time median and best; CPU time is the process's median (every JVM thread, GC "
        "included; a 10 ms clock); thread CPU is the calling thread's median (exact, GC excluded: what "
        f"a call costs without the waiting that load adds). Load average {d['load']} on {d['cpus']} CPUs while it ran. "
        "Ratio: `uniform` time / `kassign` time (above 1×: kassign faster). Paired ratio: each round "
        "calls both assignors one after the other; the median over the rounds of `uniform`'s wall time "
        "over `kassign`'s in the same round (a burst of load slows both calls of a round, and leaves "
        "this ratio alone where it moves both medians)."
    )
    w("")
    w(
        "| scenario | calls | `uniform` wall median / best | `kassign` wall median / best | ratio median / best "
        "| paired ratio | `uniform` CPU | `kassign` CPU | `uniform` / `kassign` thread CPU |"
    )
    w("|---|---|---|---|---|---|---|---|---|")
    for r in d["rows"]:
        paired = f"{r['paired']:.2f}×" if "paired" in r else "—"
        w(
            f"| {r['scenario']} | {r.get('calls', '')} | "
            f"{fmt_time(r['uniform_wall'])} / {fmt_time(r['uniform_best'])} | "
            f"{fmt_time(r['kassign_wall'])} / {fmt_time(r['kassign_best'])} | "
            f"{r['uniform_wall'] / r['kassign_wall']:.2f}× / {r['uniform_best'] / r['kassign_best']:.2f}× | "
            f"{paired} | "
            f"{fmt_time(r['uniform_cpu']) if r['uniform_cpu'] else '< 10 ms'} | "
            f"{fmt_time(r['kassign_cpu']) if r['kassign_cpu'] else '< 10 ms'} | "
            f"{fmt_time(r['uniform_thread'])} / {fmt_time(r['kassign_thread'])} |"
        )
    two = [
        r["scenario"]
        for r in d["rows"]
        if r["uniform_wall"] / r["kassign_wall"] >= 2 and r["uniform_best"] / r["kassign_best"] >= 2
    ]
    below = [
        r["scenario"]
        for r in d["rows"]
        if r["uniform_wall"] / r["kassign_wall"] < 1 or r["uniform_best"] / r["kassign_best"] < 1
    ]
    w("")
    w(f"At 2× or more in median and best: {', '.join(two) if two else 'none'}.")
    w("")
    if below:
        w(
            f"Below 1× in median or best ({len(below)} of {len(d['rows'])}): {', '.join(below)}. "
            'Why: docs/broker.md, "Where the time goes".'
        )
        w("")
    else:
        w(f"At or above 1× in median and best: all {len(d['rows'])} cells.")
        w("")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    ap.add_argument("--cap", type=float, default=None, help="per-call cap in seconds (default 30)")
    ap.add_argument(
        "--python-cap",
        type=float,
        default=None,
        help=f"per-call cap of the pure-Python contenders ({', '.join(PURE_PYTHON)}; default 30)",
    )
    ap.add_argument("--budget", type=float, default=None, help="seconds of samples per cell (default 5; smoke 0)")
    ap.add_argument("--repeat", type=int, default=None, help="minimum samples per cell (default 5; smoke 1)")
    ap.add_argument("--java-warmup", type=float, default=None, help="Java warm-up seconds (default 2; smoke 0)")
    ap.add_argument(
        "--warmup", type=float, default=None, help="other contenders' warm-up seconds (default 0.2; smoke 0)"
    )
    ap.add_argument(
        "--min-time",
        type=float,
        default=None,
        help="keep sampling short calls until this many seconds, at most 200 samples (default 0.3; smoke 0)",
    )
    ap.add_argument("--memory-gb", type=float, default=8.0, help="address-space limit of Python contenders")
    ap.add_argument("--setup-timeout", type=float, default=600.0)
    ap.add_argument("--contenders", nargs="*", help=f"subset of {', '.join(C.ALL_CONTENDERS)}")
    ap.add_argument("--strategies", nargs="*", help="subset of strategies")
    ap.add_argument("--scenarios", nargs="*", help="substrings of scenario names to run")
    ap.add_argument(
        "--extras",
        nargs="*",
        choices=sorted(EXTRAS),
        default=None,
        help="benchmarks to run after the grid (default: all in a full run, none with --smoke or a subset "
        "of --scenarios/--contenders/--strategies)",
    )
    ap.add_argument("--resume", action="store_true", help="keep cells already in the results JSON")
    ap.add_argument(
        "--redo",
        nargs="*",
        default=[],
        help="with --resume: measure these contenders again "
        "(for the selected strategies), e.g. after a new kassign strategy landed",
    )
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument(
        "--estimate",
        nargs="?",
        const=BASELINE,
        type=Path,
        help="print the run's cells and expected duration from the per-cell times of a results JSON "
        f"(default {BASELINE.relative_to(REPO)}), and exit",
    )
    ap.add_argument(
        "--compare",
        type=Path,
        help="list every cell of the results JSON against this older one, flagging cells slower beyond the noise",
    )
    ap.add_argument("--md", type=Path, default=None, help="report path (default BENCHMARKS.md; smoke: results/)")
    ap.add_argument("--png", type=Path, default=None)
    ap.add_argument("--results", type=Path, default=None, help="results JSON (default benches/results/<mode>.json)")
    args = ap.parse_args(argv)
    smoke = args.smoke
    args.cap = args.cap if args.cap is not None else 30.0
    args.python_cap = args.python_cap if args.python_cap is not None else 30.0
    args.budget = args.budget if args.budget is not None else (0.0 if smoke else 5.0)
    args.repeat = args.repeat if args.repeat is not None else (1 if smoke else 5)
    args.java_warmup = args.java_warmup if args.java_warmup is not None else (0.0 if smoke else 2.0)
    args.warmup = args.warmup if args.warmup is not None else (0.0 if smoke else 0.2)
    args.min_time = args.min_time if args.min_time is not None else (0.0 if smoke else 0.3)
    if args.extras is None:
        subset = args.smoke or args.scenarios or args.contenders or args.strategies
        args.extras = [] if subset else list(EXTRAS)
    if args.estimate:
        return estimate(args, args.estimate)
    if args.compare:
        return compare(args.compare, results_path(smoke, args.results))
    md = args.md or (RESULTS_DIR / "BENCHMARKS.smoke.md" if smoke else REPO / "BENCHMARKS.md")
    png = args.png or (RESULTS_DIR / "np_series.smoke.png" if smoke else BENCHES / "np_series.png")
    if args.render_only:
        data = json.loads(results_path(smoke, args.results).read_text())
    else:
        data = run(args)
    md.parent.mkdir(parents=True, exist_ok=True)
    png.parent.mkdir(parents=True, exist_ok=True)
    # The report links the PNG relative to itself.
    render(data, md, os.path.relpath(png, md.parent))
    plot(data, png)
    print(f"wrote {md} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
