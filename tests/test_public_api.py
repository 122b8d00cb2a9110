import importlib
import inspect
import pkgutil

import pytest

ROOTS = ["coded", "theory", "allocation", "mapreduce"]


def _public_modules():
    """Every module whose dotted name has no private part (data packages aside)."""
    names = []
    for root in ROOTS:
        names.append(root)
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            parts = info.name.split(".")
            if not any(p.startswith("_") for p in parts) and parts[-1] != "data":
                names.append(info.name)
    return names


PACKAGES = _public_modules()


PACKAGES_REEXPORTING = {"coded", "coded.codes", "theory", "allocation", "mapreduce"}


def _isort_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then the rest (ruff's sort of ``__all__``)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _public_names(module):
    """The package's exports, or what the module defines under a public name."""
    exports = getattr(module, "_EXPORTS", None)
    if exports is not None:
        return set(exports)
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not inspect.ismodule(value)
        and name != "annotations"
    }


def _defined_here(module):
    """Public functions and classes whose home is `module` itself."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    }


def test_every_public_module_is_covered():
    assert len(PACKAGES) >= 15
    assert {"coded.runtime.interface", "coded.codes.interface"} <= set(PACKAGES)
    assert {"theory.validation", "theory.rng", "coded.injection"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted_and_matches_public_names(package):
    module = importlib.import_module(package)
    assert module.__doc__
    names = list(module.__all__)
    assert names in (sorted(names), sorted(names, key=_isort_key))
    if package in PACKAGES_REEXPORTING:
        assert set(module.__all__) == _public_names(module)
    else:  # a module: everything it defines is exported, and every export exists
        assert _defined_here(module) <= set(module.__all__)
        assert all(hasattr(module, name) for name in module.__all__)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_is_documented(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        assert inspect.getdoc(obj), f"{package}.{name} has no docstring"
        if inspect.isfunction(obj) and not package.endswith(".interface"):
            assert "Parameters" in inspect.getdoc(obj), f"{package}.{name}"
