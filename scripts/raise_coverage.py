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


# (path, function, exception) -> why no test can reach the raise
UNREACHABLE = {
    ("coded/codes/_mds.py", "recovery_threshold", "AssertionError"): (
        "RowMDSCode checks sum(loads) >= u * block_rows when it is built"
    ),
    ("theory/_cdc.py", "solve_k3_placement", "RuntimeError"): (
        "HiGHS failing on an LP and IP whose feasibility the checks guarantee"
    ),
    ("theory/_exact_latency.py", "_window", "RuntimeError"): (
        "the survival function of a finite shifted-exponential mixture reaches 0"
    ),
    ("theory/_heterogeneous.py", "_bisect_tau", "ValueError"): (
        "the cap checks guarantee that the expected rows reach m"
    ),
    ("theory/_straggling.py", "load_straggling", "AssertionError"): (
        "any q finishers of the MDS placement hold N coded files"
    ),
    # caught inside the core and reported in another error's message
    ("coded/codes/_gradient_schemes.py", "_partial", "ValueError"): (
        "becomes a GradientFailure whose message the decoder's GradientError "
        "carries (matched in tests/coded/test_code_error_branches.py)"
    ),
}


def core_raises() -> dict[tuple[str, int], tuple[str, str]]:
    """``(path, line) -> (function, exception)`` of every ``raise X(...)``."""
    found = {}
    for path in CORE:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    exc = node.exc
                    call = exc.func if isinstance(exc, ast.Call) else exc
                    key = (str(path.relative_to(ROOT)), node.lineno)
                    found[key] = (function.name, ast.unparse(call))
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
    unreachable = {
        key
        for key, (function, exc) in raises.items()
        if (key[0], function, exc) in UNREACHABLE
    }
    missing = sorted(set(raises) - plugin.lines - unreachable)
    print(
        f"\n{len(raises) - len(missing) - len(unreachable)} of {len(raises)} raises "
        f"matched by a test, {len(unreachable)} unreachable or reported indirectly:"
    )
    for (path, function, exc), why in UNREACHABLE.items():
        print(f"  {path} {function} {exc}: {why}")
    for path, line in missing:
        function, exc = raises[path, line]
        print(f"not matched: {path}:{line} {function} {exc}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
