"""The documentation's examples run: every ```pycon block in docs/ and the README is executed with
doctest and must print exactly what the page shows. Blocks of one page share their names, in page
order, like a console session. The repository's own files must not point outside it."""

from __future__ import annotations

import doctest
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```pycon[^\n]*\n(.*?)^```", re.S | re.M)
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
PAGES_WITH_EXAMPLES = [p for p in PAGES if FENCE.search(p.read_text(encoding="utf-8"))]


def _run_page(path: Path) -> tuple[int, int]:
    text = path.read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, object] = {"__name__": f"docs:{path.name}"}
    for match in FENCE.finditer(text):
        lineno = text.count("\n", 0, match.start(1))
        test = parser.get_doctest(match.group(1), globs, str(path.relative_to(ROOT)), str(path), lineno)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest copies the namespace; carry it to the page's next block
    return runner.failures, runner.tries


def test_pages_with_examples_are_found():
    # The strategy pages, the wire page and getting started all carry examples; a broken fence
    # pattern would otherwise make this module test nothing.
    names = {p.relative_to(ROOT).as_posix() for p in PAGES_WITH_EXAMPLES}
    assert {
        "docs/strategies/range.md",
        "docs/strategies/sticky.md",
        "docs/strategies/cooperative-sticky.md",
        "docs/wire.md",
        "docs/getting-started.md",
    } <= names


@pytest.mark.parametrize("path", PAGES_WITH_EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_examples_run(path):
    failures, tries = _run_page(path)
    assert tries > 0
    assert failures == 0, f"{failures} of {tries} examples in {path.relative_to(ROOT)} failed (doctest output above)"


def test_repository_does_not_point_outside_itself():
    """Facts the project relies on live in docs/; no tracked file cites notes kept elsewhere."""
    pattern = "|".join(["DESIGN" + r"\.md", "REFERENCE" + r"\.md", r"\.\./" + "shared"])
    out = subprocess.run(["git", "grep", "-n", "-E", pattern], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode == 128:
        pytest.fail(f"git grep failed: {out.stderr}")
    assert out.stdout == "", out.stdout
