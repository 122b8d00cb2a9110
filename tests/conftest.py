import os

import pytest
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


@pytest.fixture(scope="session")
def docs_build(tmp_path_factory):
    """The Sphinx site, built once per session (tests/_docs_build.py)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    from _docs_build import build_docs

    return build_docs(tmp_path_factory.mktemp("docs"))
