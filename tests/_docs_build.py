"""Build the Sphinx site once per test session (notebooks executed once, cached)."""

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class DocsBuild:
    """Where a build of the documentation went and what it printed."""

    returncode: int
    log: str
    html: Path

    def page(self, name: str) -> str:
        """Text of the built HTML page ``name`` (e.g. ``"theory/model"``)."""
        return (self.html / f"{name}.html").read_text(encoding="utf-8")


def build_docs(workdir: Path) -> DocsBuild:
    """Run ``sphinx-build -W`` on a copy of docs/ and notebooks/ in `workdir`.

    The copy keeps the working tree free of the pages autosummary generates; the
    notebooks execute in the build (myst-nb, jupyter-cache under `workdir`).
    """
    source = workdir / "src"
    shutil.copytree(
        ROOT / "docs",
        source / "docs",
        symlinks=True,
        ignore=shutil.ignore_patterns("_build", "generated", "*.rst"),
    )
    shutil.copytree(
        ROOT / "notebooks",
        source / "notebooks",
        ignore=shutil.ignore_patterns(".ipynb_checkpoints"),
    )
    for template in (ROOT / "docs" / "_templates").rglob("*.rst"):
        target = source / "docs" / template.relative_to(ROOT / "docs")
        shutil.copy2(template, target)
    env = {
        **os.environ,
        "CODED_DOCS_CACHE": str(workdir / "jupyter_cache"),
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    html = workdir / "html"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "html",
        "-d",
        str(workdir / "doctrees"),
        str(source / "docs"),
        str(html),
    ]
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=1500, check=False
    )
    log = "".join(  # without the notebook kernels' start-up chatter
        line
        for line in (done.stdout + done.stderr).splitlines(keepends=True)
        if not line.startswith("[IPKernelApp]")
    )
    return DocsBuild(done.returncode, log, html)
