"""The import graph: no cycle between modules, Dask only in runtime modules."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("coded", "allocation", "mapreduce", "theory")
RUNTIME = ("coded.runtime", "mapreduce._runtime")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> set[str]:
    """Every module imported anywhere (function bodies too), TYPE_CHECKING aside."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        stack.extend(ast.iter_child_nodes(node))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    edges = {}
    for name, path in modules.items():
        imported = _imports(ast.parse(path.read_text(), str(path)))
        edges[name] = {m for m in imported if m in modules and m != name} | {
            m for m in imported if m.split(".")[0] in ("dask", "distributed")
        }
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt] if nxt in path else [nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_no_import_cycle_through_mapreduce(graph):
    # a cycle through mapreduce needs an edge back into it from below, or a cycle
    # inside it; the layers below never import it (test_lower_layers_...)
    inside = {
        m: {d for d in deps if d.startswith("mapreduce")}
        for m, deps in graph.items()
        if m.startswith("mapreduce")
    }
    assert len(inside) >= 9
    assert _cycle(inside) is None, _cycle(inside)


def test_cycle_finder_finds_a_planted_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_mapreduce_execution_has_one_home(graph):
    assert not (ROOT / "coded" / "runtime" / "_mapreduce.py").exists()
    homes = {"mapreduce._runtime", "mapreduce._runtime_linear"}  # coded map tasks
    runtime_users = {m for m, deps in graph.items() if deps & homes} - homes
    # TeraSort's input storage builds the runtime's StoredCopies (files kept on
    # every node that maps them); it runs no map or shuffle itself
    assert runtime_users == {"mapreduce._job", "mapreduce._runtime_terasort"}
    above = {"mapreduce._job", "mapreduce._examples", "mapreduce"}
    for home in homes:
        assert not graph[home] & above
        assert "mapreduce._records" in graph[home]
    assert "mapreduce._runtime_linear" not in graph["mapreduce._runtime"]


def test_lower_layers_never_import_mapreduce(graph):
    offenders = {
        m: sorted(d for d in deps if d.startswith("mapreduce"))
        for m, deps in graph.items()
        if m.startswith(("coded", "theory", "allocation"))
    }
    assert not any(offenders.values()), offenders


def test_only_runtime_modules_import_dask(graph):
    dask_users = {
        m
        for m, deps in graph.items()
        if any(d.split(".")[0] in ("dask", "distributed") for d in deps)
    }
    assert dask_users
    assert all(m.startswith(RUNTIME) for m in dask_users), sorted(dask_users)
