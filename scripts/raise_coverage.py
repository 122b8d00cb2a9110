"""Which ``raise`` statements of the math core a test reaches with ``match=``.

Usage (from the repository root)::

    python scripts/raise_coverage.py                  # the default test selection
    python scripts/raise_coverage.py tests/coded      # other pytest arguments

Lists every ``raise`` of an exception in the math core (``coded/codes/``,
``theory/``, ``allocation/_solvers.py``, mapreduce's planner and placements) and
runs the tests with a hook on ``pytest.raises``: when a ``pytest.raises(...,
match=...)`` block catches an exception, the line that raised it (the innermost
frame of its traceback) counts as matched. Only the tests whose own source calls
``pytest.raises`` run. Prints the raises no test matches and exits 1 if there are
any.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from pathlib import Path

import pytest
from _pytest.raises import RaisesExc

ROOT = Path(__file__).resolve().parent.parent
CORE = (
    *sorted((ROOT / "coded" / "codes").glob("*.py")),
    *sorted((ROOT / "theory").glob("*.py")),
    ROOT / "allocation" / "_solvers.py",
    ROOT / "mapreduce" / "_plan.py",
    ROOT / "mapreduce" / "_placement.py",
    ROOT / "mapreduce" / "_coding.py",
)
TESTS = (
    "tests/coded",
    "tests/theory",
    "tests/allocation",
    "tests/mapreduce/test_plan.py",
    "tests/mapreduce/test_plan_boundaries.py",
    "tests/mapreduce/test_placement.py",
    "tests/mapreduce/test_coded_maps.py",
    "tests/test_bad_input.py",
)


def core_raises() -> dict[tuple[str, int], str]:
    """``(path, line) -> exception`` of every ``raise X(...)`` in the core."""
    found = {}
    for path in CORE:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                call = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                found[str(path.relative_to(ROOT)), node.lineno] = ast.unparse(call)
    return found


class MatchedRaises:
    """pytest plugin: record where each exception a ``match=`` block caught rose."""

    def __init__(self) -> None:
        self.lines: set[tuple[str, int]] = set()
        self._exit = RaisesExc.__exit__

    def pytest_configure(self, config: pytest.Config) -> None:
        plugin = self

        def __exit__(raises, exc_type, exc_val, exc_tb):
            suppressed = plugin._exit(raises, exc_type, exc_val, exc_tb)
            if suppressed and raises.match is not None and exc_tb is not None:
                plugin.record(exc_tb)
            return suppressed

        RaisesExc.__exit__ = __exit__

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Keep the tests whose own source calls ``pytest.raises`` (much faster)."""
        keep = [item for item in items if "raises(" in _source(item)]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        RaisesExc.__exit__ = self._exit

    def record(self, tb) -> None:
        while tb.tb_next is not None:
            tb = tb.tb_next
        path = Path(tb.tb_frame.f_code.co_filename).resolve()
        if path.is_relative_to(ROOT):
            self.lines.add((str(path.relative_to(ROOT)), tb.tb_lineno))


def _source(item: pytest.Item) -> str:
    function = getattr(item, "function", None)
    try:
        return inspect.getsource(function) if function is not None else ""
    except (OSError, TypeError):
        return ""


def main(argv: list[str]) -> int:
    """Run the tests, print the unmatched raises; 1 if there are any."""
    os.chdir(ROOT)
    os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")
    plugin = MatchedRaises()
    args = argv or list(TESTS)
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-x", *args], plugins=[plugin])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"the tests failed (exit {code}); the list below is incomplete")
    raises = core_raises()
    missing = sorted(set(raises) - plugin.lines)
    by_file: dict[str, list[str]] = {}
    for path, line in missing:
        by_file.setdefault(path, []).append(f"{line} {raises[path, line]}")
    print(f"\n{len(raises) - len(missing)} of {len(raises)} raises matched by a test")
    for path, lines in by_file.items():
        print(f"{path}: {', '.join(lines)}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
