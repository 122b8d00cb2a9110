"""pytest plugin of scripts/mutation.py: a mutant's tests run fastest first.

mutmut hands each mutant the tests that cover its function in no particular order
and stops at the first failure (``-x``); ordering them by the durations mutmut
measured (``mutmut-stats.json``, in the working directory) kills most mutants with
the short targeted tests before the long grids run.
"""

import json
from pathlib import Path


def pytest_collection_modifyitems(session, config, items):
    stats = Path("mutmut-stats.json")
    if stats.exists():
        duration = json.loads(stats.read_text())["duration_by_test"]
        items.sort(key=lambda item: duration.get(item.nodeid, 0.0))
