"""The Cargo workspace's rule (ARCHITECTURE.md, "Crates"): the core crate depends on no binding
library and names none in its sources, so no rule can move into a binding unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "rust" / "core"

# The bindings' libraries: PyO3 and its Arrow bridge, the Arrow crates, JNI, the extension's allocator.
BINDING_CRATE = re.compile(r"^(pyo3.*|jni.*|arrow.*|mimalloc.*)$")
# A use of one of them in Rust source: a path (`pyo3::`, `arrow_array::`), `extern crate`, or an
# attribute macro (`#[pyfunction]`, `#[pymodule]`, `#[pyclass]`).
BINDING_USE = re.compile(
    r"\b(pyo3|pyo3_arrow|jni|arrow|arrow_[a-z]+|mimalloc)::|extern\s+crate\s+(pyo3|jni|arrow)|#\[py(function|module|class|methods)\b"
)


def _manifest(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_workspace_has_the_three_crates() -> None:
    root = _manifest(REPO / "Cargo.toml")
    assert sorted(root["workspace"]["members"]) == ["rust/core", "rust/jni", "rust/python"]
    names = {m: _manifest(REPO / m / "Cargo.toml")["package"]["name"] for m in root["workspace"]["members"]}
    assert names == {"rust/core": "kassign-core", "rust/python": "kassign-python", "rust/jni": "kassign-jni"}


def test_core_manifest_has_no_binding_dependency() -> None:
    manifest = _manifest(CORE / "Cargo.toml")
    for table in ("dependencies", "build-dependencies", "dev-dependencies"):
        deps = manifest.get(table, {})
        assert not [d for d in deps if BINDING_CRATE.match(d)], (table, deps)
    targets = manifest.get("target", {})
    for spec in targets.values():
        for table in ("dependencies", "build-dependencies", "dev-dependencies"):
            assert not [d for d in spec.get(table, {}) if BINDING_CRATE.match(d)], spec
    assert "features" not in manifest, "the core has no features that could pull a binding in"


def test_core_sources_name_no_binding_library() -> None:
    files = sorted(CORE.rglob("*.rs"))
    assert len(files) > 20
    offenders = [
        f"{f.relative_to(REPO)}:{n}: {line.strip()}"
        for f in files
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if BINDING_USE.search(line)
    ]
    assert offenders == []


def test_bindings_depend_on_the_core() -> None:
    for member in ("rust/python", "rust/jni"):
        deps = _manifest(REPO / member / "Cargo.toml")["dependencies"]
        assert "kassign-core" in deps, member
