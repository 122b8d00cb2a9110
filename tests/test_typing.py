"""Type checkers see the real types of the public API (coded/__init__.pyi, mypy)."""

import ast
import pathlib
import subprocess
import sys

import coded

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "typecheck" / "example.py"

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
