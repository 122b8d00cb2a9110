import importlib.util
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from _docs_build import PendingBuild, start_docs_build
from hypothesis import HealthCheck, Phase, settings

settings.register_profile("dev", max_examples=50, deadline=None)
# "ci" is Hypothesis' built-in profile (derandomize, no database, print_blob);
# we bound the budget so the whole suite stays well under 15 minutes on 2 cores.
settings.register_profile(
    "ci",
    settings.get_profile("ci"),
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# scripts/mutation.py: as "ci" without shrinking (a mutant stops at its first
# failing example; shrinking it took up to a minute per killed mutant)
settings.register_profile(
    "mutation",
    settings.get_profile("ci"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
settings.register_profile(
    "nightly",
    max_examples=5_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


_DOCS_BUILD = pytest.StashKey[PendingBuild]()


@pytest.hookimpl(trylast=True)  # after -k / -m have deselected
def pytest_collection_modifyitems(config, items):
    """Start the Sphinx build now if a selected test reads the site."""
    needed = any("docs_build" in getattr(item, "fixturenames", ()) for item in items)
    installed = all(importlib.util.find_spec(m) for m in ("sphinx", "myst_nb"))
    if needed and installed:
        workdir = Path(tempfile.mkdtemp(prefix="coded-docs-"))
        config.stash[_DOCS_BUILD] = start_docs_build(workdir)


def pytest_unconfigure(config):
    pending = config.stash.get(_DOCS_BUILD, None)
    if pending is not None:
        if pending.process.poll() is None:  # the session ended first
            os.killpg(pending.process.pid, signal.SIGKILL)  # sphinx and its kernels
            pending.process.wait()
        shutil.rmtree(pending.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def docs_build(request):
    """The Sphinx site, built once per session (tests/_docs_build.py)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    return request.config.stash[_DOCS_BUILD].result()
