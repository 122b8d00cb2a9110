"""Every reference in code, docs, notebooks and CLI output points inside the repository.

A reference is a path to a document (``*.md``, ``*.ipynb``, ``*.rst``), optionally with
a ``#section`` anchor. It must name a file of the repository (relative to the root or
to the referring file), and an anchor must be a heading or label of that file. No text
may point to a location outside the repository.
"""

import re
from pathlib import Path

import pytest
from _markdown import anchors

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {
    ".git",
    ".ci/venv",
    ".venv",
    "venv",
    "_build",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "build",
    "dist",
    ".ipynb_checkpoints",
    "jupyter_execute",
}
SUFFIXES = {".py", ".ipynb", ".md", ".rst", ".toml", ".txt", ".cfg", ".ini", ".sh"}
SCRIPTS = {ROOT / ".ci" / "run"}
THIS = Path(__file__).resolve()

URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")
REFERENCE = re.compile(
    r"(?<![\w/.-])(/?(?:\.{1,2}/)*(?:[\w.-]+/)*[\w-]+\.(?:md|ipynb|rst))(?:#([\w-]+))?"
)
# Pieces joined so that this file does not itself cite a path outside the project.
OUTSIDE = re.compile(r"(/work/|" + "shared" + r"/docs|~/|\bfile://)")


def _skipped(path: Path) -> bool:
    relative = path.relative_to(ROOT).as_posix()
    return any(
        part in SKIP_DIRS or part.endswith(".egg-info") for part in path.parts
    ) or any(relative.startswith(d + "/") for d in SKIP_DIRS if "/" in d)


def project_files() -> list[Path]:
    """Text files of the project (sources, docs, notebooks, configuration)."""
    return sorted(
        p
        for p in ROOT.rglob("*")
        if p.is_file()
        and (p.suffix in SUFFIXES or p in SCRIPTS)
        and p != THIS
        and not _skipped(p)
    )


FILES = project_files()
BASENAMES = {p.name for p in FILES} | {
    p.name for p in ROOT.rglob("*") if p.is_file() and not _skipped(p)
}


def _target(reference: str, source: Path) -> Path | None:
    """The repository file `reference` names from `source`, or None."""
    if "/" not in reference.removeprefix("./"):
        candidates = [source.parent / reference, ROOT / reference]
        if reference in BASENAMES:
            candidates += [p for p in FILES if p.name == reference]
    else:
        candidates = [ROOT / reference, source.parent / reference]
    for candidate in candidates:
        resolved = candidate.resolve()
        if resolved.is_file() and resolved.is_relative_to(ROOT):
            return resolved
    return None


def broken_references(path: Path) -> list[str]:
    """Return the references of `path` that do not resolve inside the repository."""
    text = URL.sub("", path.read_text(encoding="utf-8", errors="replace"))
    problems = [f"points outside the repository: {m!r}" for m in OUTSIDE.findall(text)]
    for match in REFERENCE.finditer(text):
        reference, anchor = match.group(1), match.group(2)
        target = _target(reference, path)
        if target is None:
            problems.append(f"no such document in the repository: {reference}")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            problems.append(f"no section #{anchor} in {reference}")
    return problems


@pytest.mark.parametrize(
    "path", FILES, ids=[p.relative_to(ROOT).as_posix() for p in FILES]
)
def test_references_resolve(path):
    assert broken_references(path) == []


def test_the_scan_covers_the_project():
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "coded/__main__.py", "docs/theory/index.md"} <= names
    assert any(name.startswith("notebooks/") for name in names)


def test_detects_missing_documents_and_outside_paths(tmp_path):
    page = ROOT / "docs" / "theory" / "model.md"
    assert _target("docs/theory/model.md", ROOT / "coded" / "x.py") == page
    assert _target("model.md", page) == page
    assert _target("../../outside" + ".md", page) is None
    bad = tmp_path / "bad.py"
    bad.write_text(
        "see theory" + ".md section 2, docs/theory/model.md#no-such-section,\n"
        "and " + "/work" + "/" + "shared" + "/docs/theory" + ".md, "
        "https://example.org/a" + ".md\n"
    )
    problems = broken_references(bad)
    assert len(problems) == 5, problems
    assert sum("outside" in p for p in problems) == 2
    assert sum("no section" in p for p in problems) == 1
