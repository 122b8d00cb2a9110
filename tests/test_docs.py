"""The user documentation: every example in docs/**/*.md runs and prints its value."""

import doctest
from pathlib import Path

import pytest
from _markdown import python_examples, stray_prompts

DOCS = Path(__file__).parent.parent / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
THEORY = sorted((DOCS / "theory").glob("*.md"))


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_examples_of_page(path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    text = path.read_text(encoding="utf-8")
    assert not stray_prompts(text), (
        f"{path.name}: '>>>' outside a ```python fence on lines {stray_prompts(text)}"
    )
    parser = doctest.DocTestParser()
    test = parser.get_doctest(python_examples(text), {}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of {path.name} failed"


@pytest.mark.parametrize("path", THEORY, ids=[p.name for p in THEORY])
def test_theory_page_has_check_values(path):
    if path.name == "index.md":
        return
    examples = doctest.DocTestParser().get_examples(
        python_examples(path.read_text(encoding="utf-8"))
    )
    checked = [e for e in examples if e.want.strip()]
    assert len(checked) >= 3, f"{path.name} has {len(checked)} check values"


def test_theory_pages_exist():
    names = {p.name for p in THEORY}
    assert {
        "index.md",
        "model.md",
        "stragglers.md",
        "codes.md",
        "exact.md",
        "allocation.md",
        "mapreduce.md",
    } <= names


def test_fences_are_blanked_outside_python():
    text = "intro >>> not code\n```text\n>>> 1\n```\n```python\n>>> 1 + 1\n2\n```\n"
    kept = python_examples(text).splitlines()
    assert kept == ["", "", "", "", "", ">>> 1 + 1", "2", ""]
    assert stray_prompts(text) == [3]
