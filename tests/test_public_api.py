import importlib
import inspect

import pytest

PACKAGES = ["coded", "coded.codes", "theory", "allocation", "mapreduce"]


def _public_names(module):
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


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted_and_matches_public_names(package):
    module = importlib.import_module(package)
    assert module.__doc__
    assert list(module.__all__) == sorted(module.__all__)
    assert set(module.__all__) == _public_names(module)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_is_documented(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        assert inspect.getdoc(obj), f"{package}.{name} has no docstring"
        if inspect.isfunction(obj):
            assert "Parameters" in inspect.getdoc(obj), f"{package}.{name}"
