import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("coded", "allocation", "mapreduce", "theory")


@pytest.mark.parametrize(
    "statement",
    [
        "import theory, allocation",
        "import coded",
        "import coded.errors, theory.validation, theory.rng",
        "import mapreduce",
    ],
)
def test_light_imports_do_not_load_galois_or_distributed(statement):
    code = (
        f"{statement}; import sys; "
        "heavy = [m for m in ('galois', 'distributed') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _module_paths():
    paths = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            paths[name] = path
    return paths


def _import_graph():
    """Module -> the project's modules it imports anywhere (functions included)."""
    paths = _module_paths()
    graph = {}
    for name, path in paths.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module]
                targets += [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            imported |= {t for t in targets if t in paths and t != name}
        graph[name] = imported
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while not component or node not in component:
                component.add(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1:
                components.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return components


def test_api_and_placed_do_not_import_each_other():
    graph = _import_graph()
    assert "coded._api" not in graph["coded._placed"]
    assert not {"coded._api", "coded._placed"} & graph["coded._dispatch"]
    assert "coded._dispatch" in graph["coded._placed"]


def test_theory_imports_nothing_of_the_other_packages():
    graph = _import_graph()
    outside = {
        (name, target)
        for name, targets in graph.items()
        if name.split(".")[0] == "theory"
        for target in targets
        if target.split(".")[0] != "theory"
    }
    assert outside == set()
    code = (
        "import theory, sys; "
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('coded', 'allocation', 'mapreduce')]; "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_import_cycle_between_modules():
    # a package's own __init__ re-exports its modules: not a dependency cycle
    graph = {
        name: {
            t
            for t in targets
            if not t.startswith(name + ".") and not name.startswith(t + ".")
        }
        for name, targets in _import_graph().items()
    }
    assert _cycles(graph) == []
