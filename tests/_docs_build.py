"""Build the Sphinx site once per test session (notebooks executed once, cached).

The build starts in the background as soon as the session has collected a test
that needs it (tests/conftest.py), so its two to three minutes overlap the tests
that run before the first one that reads the site.
"""

import os
import shutil
import signal
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


@dataclass(frozen=True)
class PendingBuild:
    """A build running in a subprocess; `result` waits for it."""

    process: subprocess.Popen[bytes]
    workdir: Path

    def result(self) -> DocsBuild:
        """Wait for the build (at most `TIMEOUT` seconds) and read what it printed."""
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        log = "".join(  # without the notebook kernels' start-up chatter
            line
            for line in (self.workdir / "sphinx.log")
            .read_text(encoding="utf-8", errors="replace")
            .splitlines(keepends=True)
            if not line.startswith("[IPKernelApp]")
        )
        return DocsBuild(self.process.returncode, log, self.workdir / "html")


TIMEOUT = 1500  # seconds


def start_docs_build(workdir: Path) -> PendingBuild:
    """Start ``sphinx-build -W`` on a copy of docs/ and notebooks/ in `workdir`.

    The copy keeps the working tree free of the pages autosummary generates; the
    notebooks execute in the build (myst-nb, jupyter-cache under `workdir`). Its
    output goes to a file (a pipe nobody reads could fill and stall it).
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
        str(workdir / "html"),
    ]
    with (workdir / "sphinx.log").open("wb") as log:
        process = subprocess.Popen(
            command,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one process group: sphinx and its kernels
        )
    return PendingBuild(process, workdir)
