"""The user documentation: every example in docs/**/*.md runs and prints its value."""

import doctest
import importlib
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


# --- the Sphinx site (built once per session by the docs_build fixture) -----------
# The first test to ask for the site waits for the build, notebooks included.
site = pytest.mark.timeout(1800)

# one documented function per package, whose page must show its numpydoc sections
PACKAGES = {
    "coded": "coded_matmul",
    "theory": "hcmm_loads",
    "allocation": "solve_hcmm",
    "mapreduce": "plan_shuffle",
}
SECTIONS = (
    "index",
    "guide/quickstart",
    "guide/concepts",
    "guide/choosing",
    "guide/cluster",
    "guide/mapreduce",
    "theory/index",
    "theory/model",
    "theory/stragglers",
    "theory/allocation",
    "theory/mapreduce",
    "examples",
    "api/index",
)


@site
def test_sphinx_build_has_no_warnings(docs_build):
    assert docs_build.returncode == 0, docs_build.log[-6000:]
    assert "WARNING: " not in docs_build.log, docs_build.log[-6000:]


@site
def test_site_has_every_section(docs_build):
    missing = [s for s in SECTIONS if not (docs_build.html / f"{s}.html").is_file()]
    assert missing == []
    for section in SECTIONS:  # each page holds its own page, titled as its source
        title = (DOCS / f"{section}.md").read_text(encoding="utf-8").splitlines()[0]
        assert f"<h1>{title.removeprefix('# ')}<" in docs_build.page(section), section


@site
@pytest.mark.parametrize("package", PACKAGES)
def test_api_reference_documents_every_public_name(docs_build, package):
    module = importlib.import_module(package)
    pages = docs_build.html / "api" / "generated"
    missing = [
        name
        for name in module.__all__
        if not (pages / f"{package}.{name}.html").is_file()
    ]
    assert missing == []
    assert "Parameters" in docs_build.page(
        f"api/generated/{package}.{module.__all__[-1]}"
    )


@site
def test_theory_pages_render_their_check_values(docs_build):
    assert "0.0313" in docs_build.page("theory/stragglers")
    assert "24.544" in docs_build.page("theory/allocation")
