"""mkdocs hook: serve the repository-root files that docs pages include.

``docs/benchmarks.md`` includes ``BENCHMARKS.md`` from the repository root (pymdownx.snippets), and
that file shows ``benches/np_series.png`` by a path relative to the root. This hook adds the plot to
the site under the same relative path, so the included text needs no rewriting and the link checks
of ``mkdocs build --strict`` see a real file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent

#: Files outside docs/ that pages link to, by their path relative to the repository root.
ROOT_ASSETS = ("benches/np_series.png",)


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    for rel in ROOT_ASSETS:
        files.append(File.generated(config, rel, abs_src_path=str(ROOT / rel)))
    return files
