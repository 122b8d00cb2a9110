"""Type checkers see the real types of the public API (coded/__init__.pyi, mypy).

Two places: the checkout itself (mypy run from the repo root finds the packages in
the current directory), and a user's script in a temporary directory outside it,
which sees only what the installation gives (the editable install's static .pth,
pyproject.toml's build section).
"""

import ast
import importlib.metadata
import json
import pathlib
import re
import subprocess
import sys
import typing

import pytest

import coded
from coded._dispatch import ExecutionOptions
from coded._keywords import ExecutionKeywords

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "typecheck" / "example.py"
USER_SCRIPT = ROOT / "tests" / "typecheck" / "user_script.py"

MISUSE = """\
import numpy as np
import coded

result = coded.coded_matmul(np.eye(3), np.ones(3), k="2")
result.no_such_field
coded.lagrange_map([np.eye(2)], lambda X: X @ X, degree=2, client="tcp://x")
pending = coded.coded_matmul_async(np.eye(3), np.ones(3), n="4")
code = coded.MDSCode(6, 4, field="65537")
"""


def _stub_exports():
    """Name -> module of every name the stub imports, and the stub's ``__all__``."""
    tree = ast.parse((ROOT / "coded" / "__init__.pyi").read_text())
    imported, listed = {}, None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            imported.update({alias.name: node.module for alias in node.names})
        elif isinstance(node, ast.Assign) and node.targets[0].id == "__all__":
            listed = ast.literal_eval(node.value)
    return imported, listed


def test_stub_exports_exactly_what_coded_resolves():
    imported, listed = _stub_exports()
    assert imported == coded._EXPORTS
    assert sorted(listed) == coded.__all__


def test_mypy_strict_sees_the_public_types(tmp_path):
    misuse = tmp_path / "misuse.py"
    misuse.write_text(MISUSE)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",  # report the scripts' errors, not coded's
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(EXAMPLE),
            str(misuse),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if "example.py" in e], run.stdout
    assert len(errors) == 5, run.stdout
    assert 'Argument "k" to "coded_matmul" has incompatible type "str"' in errors[0]
    assert '"MatmulResult" has no attribute "no_such_field"' in errors[1]
    assert 'Argument "client" to "lagrange_map" has incompatible type' in errors[2]
    assert 'Argument "n" to "coded_matmul_async" has incompatible type' in errors[3]
    assert 'Argument "field" to "MDSCode" has incompatible type "str"' in errors[4]


def test_keyword_options_match_execution_options():
    assert typing.get_type_hints(ExecutionKeywords) == typing.get_type_hints(
        ExecutionOptions
    )


def _mypy(*arguments, cwd):
    """Run ``mypy --strict`` with this interpreter (its site-packages) in `cwd`."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *arguments,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def _installed_from():
    """The directory this interpreter's coded-computing is installed from, if any."""
    try:
        found = importlib.metadata.distribution("coded-computing")
    except importlib.metadata.PackageNotFoundError:
        return None
    url = json.loads(found.read_text("direct_url.json") or "{}").get("url", "")
    return url.removeprefix("file://") or None


def test_a_script_outside_the_checkout_sees_the_installed_types(tmp_path):
    """The README's install (``pip install -e .``) gives mypy the real package."""
    installed = _installed_from()
    if installed is None or pathlib.Path(installed).resolve() != ROOT:
        pytest.skip(
            f"this interpreter's coded-computing is installed from {installed}, "
            f"not from this checkout ({ROOT}): nothing to check here"
        )
    assert not tmp_path.resolve().is_relative_to(ROOT)
    script = tmp_path / "user_script.py"
    script.write_text(USER_SCRIPT.read_text())
    run = _mypy("--follow-imports=silent", "--verbose", script.name, cwd=tmp_path)
    # mypy logs where it finds each module: parsed afresh or read from its cache
    where = re.search(
        r"(?:Parsing (\S+) \(coded\)|Metadata fresh for coded: file (\S+))",
        run.stderr,
    )
    assert where, f"mypy found no `coded` from {tmp_path}:\n{run.stdout}"
    found = pathlib.Path(where.group(1) or where.group(2))
    assert found.resolve() == ROOT / "coded" / "__init__.pyi"
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, run.stdout
    assert re.search(
        r'Argument "verify" to "coded_matmul" has incompatible type '
        r"\"Literal\['yes'\]\"; expected \"Literal\['detect', 'correct', 'off'\]\"",
        errors[0],
    ), errors[0]
    assert 'Argument "scheme" to "coded_matmul" has incompatible type' in errors[1]
    assert "Literal['mdss']" in errors[1]
