"""A fixed sample of mutants, each killed by the boundary test written for it.

The full mutation run (``scripts/mutation.py``, docs/development.md) does not fit
in the suite; these mutants do, in-process: the mutated function is compiled from
its own source with one operator changed, patched into its module, and the test
written for that boundary must fail on it (and pass on the original, as the suite
shows).
"""

import importlib
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def _load(relative):
    """Import a test module of this suite by path (its folder is not a package)."""
    path = TESTS / relative
    if str(path.parent) not in sys.path:  # its helpers (_codes_support) sit beside it
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem + "_sample", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mutate(monkeypatch, module_name, function, original, mutated):
    """Patch `function` of `module_name` with `original` replaced by `mutated`."""
    module = importlib.import_module(module_name)
    source = textwrap.dedent(inspect.getsource(getattr(module, function)))
    assert source.count(original) == 1, f"{original!r} not once in {function}"
    namespace = dict(vars(module))
    exec(compile(source.replace(original, mutated), module.__file__, "exec"), namespace)
    monkeypatch.setattr(module, function, namespace[function])


def _lift_edges():
    _load(
        "coded/test_boundaries.py"
    ).test_signed_decode_returns_the_field_edges_exactly(systematic=True)


def _segment_for_file_n():
    boundaries = _load("mapreduce/test_plan_boundaries.py")
    where = "Segment(receiver=2, file=3, index=0, count=1)"
    boundaries.test_a_segment_outside_the_placement_is_refused(
        {"receiver": 2, "file": 3}, where
    )


MUTANTS = {
    "lift >= p // 2": (
        ("coded.codes._fields", "lift", "residues > p // 2", "residues >= p // 2"),
        _lift_edges,
    ),
    "verify_plan file <= N": (
        (
            "mapreduce._plan",
            "_check_packet",
            "0 <= seg.file < placement.N",
            "0 <= seg.file <= placement.N",
        ),
        _segment_for_file_n,
    ),
}


@pytest.mark.parametrize("name", MUTANTS)
def test_the_boundary_test_kills_its_mutant(name, monkeypatch):
    mutation, boundary_test = MUTANTS[name]
    boundary_test()  # passes on the original code
    _mutate(monkeypatch, *mutation)
    with pytest.raises((AssertionError, IndexError)):
        boundary_test()
