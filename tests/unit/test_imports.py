"""Import hygiene: ``import kassign`` and the drop-in classes stay light, and no module-level import
cycle exists inside the package (the fleet modules live in ``kassign/fleet/``)."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "python" / "kassign"
HEAVY = ("pyspark", "pyarrow", "pandas", "numpy", "matplotlib", "kafka", "aiokafka")


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import kassign",
        "import kassign.quality",
        "import kassign.fleet",
        "import kassign.cli; kassign.cli.build_parser()",
    ],
)
def test_light_imports_load_no_heavy_dependency(code):
    loaded = _loaded_after(code)
    assert "kassign" in loaded
    assert not loaded.intersection(HEAVY), f"{code!r} imported {sorted(loaded.intersection(HEAVY))}"


def test_drop_in_classes_import_neither_pyspark_nor_pyarrow():
    # the client libraries themselves are expected; the fleet's dependencies are not
    loaded = _loaded_after("import kassign.kafka_python, kassign.aiokafka")
    assert {"kafka", "aiokafka"} <= loaded
    assert not loaded.intersection({"pyspark", "pyarrow", "pandas", "matplotlib"})


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = pathlib.Path(*name.split("."))
    base = PKG.parent / rel
    return (
        base.with_suffix(".py").exists()
        or (base / "__init__.py").exists()
        or any(base.parent.glob(base.name + ".*.so"))
    )


def _imports(path: pathlib.Path, name: str, *, module_level_only: bool) -> set[str]:
    """kassign modules that ``name`` imports: at module level only (what runs at import time), or
    anywhere in the file (functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                # `from pkg import submodule` loads the submodule, not more of the package
                found.add(sub if _is_module(sub) else mod)
    return {m for m in found if m == "kassign" or m.startswith("kassign.")}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def _graph(prefix: str, *, module_level_only: bool) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    modules = {n: p for n, p in modules.items() if n == prefix or n.startswith(prefix + ".")}
    return {
        n: {m for m in _imports(p, n, module_level_only=module_level_only) if m in modules and m != n}
        for n, p in modules.items()
    }


def test_no_import_time_cycle_in_the_package():
    graph = _graph("kassign", module_level_only=True)
    assert "kassign.fleet.snapshot" in graph["kassign.fleet.synth"]
    assert _find_cycle(graph) is None, " -> ".join(_find_cycle(graph) or [])


def test_fleet_modules_do_not_import_each_other_in_a_circle():
    # stricter inside the fleet package: imports inside functions count too (snapshot.py and
    # synth.py used to import each other that way)
    graph = _graph("kassign.fleet", module_level_only=False)
    assert "kassign.fleet.snapshot" in graph["kassign.fleet.collect"]
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_finds_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
