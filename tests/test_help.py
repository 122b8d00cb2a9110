"""``help()`` of every public entry point documents every parameter it takes.

Keyword options typed ``**option_fields: Unpack[SomeTypedDict]`` count as
parameters: each key of the TypedDict must be documented too. A class documents
its constructor's parameters (or, for a record, its attributes).
"""

import importlib
import inspect
import re
import typing

import pytest
from numpydoc.docscrape import FunctionDoc
from test_public_api import PACKAGES

NOT_CONSTRUCTED_BY_USERS = {"MatmulHandle"}  # submit_matmul returns one


def _entry_points():
    """(dotted name, object) of every public function and class, once each.

    The ``interface`` modules are the contract between the project's own
    packages (the runtime's plumbing), not entry points.
    """
    seen, found = set(), []
    for package in (p for p in PACKAGES if not p.endswith(".interface")):
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException | dict):
                continue  # errors and TypedDicts: no parameters of their own
            if id(obj) not in seen and name not in NOT_CONSTRUCTED_BY_USERS:
                seen.add(id(obj))
                found.append((f"{package}.{name}", obj))
    return found


ENTRY_POINTS = _entry_points()


def _documented(obj) -> set[str]:
    """Every name numpydoc's Parameters (and Attributes) list: ``n, k : int`` is two."""
    doc = FunctionDoc(obj, role="func")
    names = set()
    for parameter in [*doc["Parameters"], *doc["Attributes"]]:
        for name in parameter.name.split(","):
            names.add(name.strip().lstrip("*"))
    return names


def _keyword_options(parameter) -> set[str]:
    """The keys of a ``**kwargs: Unpack[TypedDict]`` parameter (empty otherwise)."""
    hint = parameter.annotation
    if isinstance(hint, str):
        match = re.fullmatch(r"Unpack\[(\w+)\]", hint)
        if not match:
            return set()
        from coded import _keywords

        hint = typing.Unpack[getattr(_keywords, match.group(1))]
    if typing.get_origin(hint) is typing.Unpack:
        return set(typing.get_args(hint)[0].__annotations__)
    return set()


def _required(obj) -> set[str]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return set()
    names = set()
    for name, parameter in signature.parameters.items():
        if name in ("self", "cls") or name.startswith("_"):
            continue
        names.add(name)
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            names |= _keyword_options(parameter)
    return names


def test_entry_points_are_enumerated():
    names = {name for name, _ in ENTRY_POINTS}
    assert {"coded.coded_matmul", "coded.submit_matmul", "coded.lagrange_map"} <= names
    assert len(ENTRY_POINTS) >= 100
    assert "coded.runtime.interface.place_shares" not in names


@pytest.mark.parametrize(
    ("name", "obj"), ENTRY_POINTS, ids=[n for n, _ in ENTRY_POINTS]
)
def test_help_documents_every_parameter(name, obj):
    missing = _required(obj) - _documented(obj)
    assert not missing, f"help({name}) does not document {sorted(missing)}"


def test_the_options_of_coded_matmul_count():
    import coded

    required = _required(coded.coded_matmul)
    options = {"verify", "check", "output", "stragglers", "timeout", "rng", "transport"}
    assert options <= required


FREE_TEXT = {"name", "instead", "verification"}  # any text: not a choice


def _string_options(obj):
    """Parameters with a string default whose annotation is a plain ``str``."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [
        name
        for name, parameter in signature.parameters.items()
        if isinstance(parameter.default, str)
        and not name.startswith("_")
        and name not in FREE_TEXT
        and re.fullmatch(r"str( \| None)?", str(parameter.annotation))
    ]


@pytest.mark.parametrize(
    ("name", "obj"), ENTRY_POINTS, ids=[n for n, _ in ENTRY_POINTS]
)
def test_string_options_are_typed_with_literal(name, obj):
    loose = _string_options(obj)
    assert not loose, f"{name}: {loose} are typed str, not a Literal of their values"
