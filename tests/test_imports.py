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
        "import coded.errors, coded.injection, theory.validation, theory.rng",
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


def _project_modules():
    """Module name -> (is a package, parsed source) for the four packages."""
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            modules[name] = (is_package, ast.parse(path.read_text()))
    return modules


def _package_of(name, is_package):
    return name if is_package else name.rpartition(".")[0]


def _imports(name, is_package, tree):
    """Absolute names `name` imports anywhere (functions included), with line numbers.

    ``from m import a`` yields ``m`` and ``m.a`` (``a`` may be a module or a name);
    relative imports are resolved against the importing module's package.
    """
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:
                base = _package_of(name, is_package).split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            found.append((module, node.lineno))
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def _import_graph(modules=None):
    """Module -> the project's modules it imports anywhere (functions included)."""
    modules = _project_modules() if modules is None else modules
    return {
        name: {
            target
            for target, _ in _imports(name, is_package, tree)
            if target in modules and target != name
        }
        for name, (is_package, tree) in modules.items()
    }


def _private_imports(modules):
    """``(importer, line, private name)`` for every import of another package's private.

    A name is private from its first component that starts with one underscore;
    what precedes it is a package, or a module whose package owns the name. Only the
    owning package's modules (its ``__init__`` included) may import it: a subpackage
    is a package of its own, so neither it nor its parent may reach into the other.
    """
    tops = {name.split(".")[0] for name in modules}
    found = set()
    for name, (is_package, tree) in modules.items():
        importer = _package_of(name, is_package)
        for target, line in _imports(name, is_package, tree):
            parts = target.split(".")
            if parts[0] not in tops:
                continue
            private = next(
                (
                    i
                    for i, part in enumerate(parts)
                    if part.startswith("_") and not part.startswith("__")
                ),
                None,
            )
            if private is None:
                continue
            owner = ".".join(parts[:private])
            owner = _package_of(owner, modules.get(owner, (True,))[0])
            if owner != importer:
                found.add((name, line, ".".join(parts[: private + 1])))
    return sorted(found)


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


def _dependencies(graph):
    """`graph` without the edges between a package's ``__init__`` and its modules.

    A package's own ``__init__`` re-exports its modules: not a dependency cycle.
    """
    return {
        name: {
            t
            for t in targets
            if not t.startswith(name + ".") and not name.startswith(t + ".")
        }
        for name, targets in graph.items()
    }


def test_no_import_cycle_between_modules():
    assert _cycles(_dependencies(_import_graph())) == []


def _package_graph(modules):
    """Package -> the other packages (subpackages included) its modules import."""
    graph = {}
    for name, targets in _import_graph(modules).items():
        package = _package_of(name, modules[name][0])
        graph.setdefault(package, set()).update(
            _package_of(target, modules[target][0]) for target in targets
        )
    return {package: targets - {package} for package, targets in graph.items()}


def test_no_import_cycle_between_packages():
    # a subpackage may use its parent's modules (coded.errors) and vice versa
    assert _cycles(_dependencies(_package_graph(_project_modules()))) == []


def test_no_module_imports_another_packages_private_module():
    assert _private_imports(_project_modules()) == []


def _third_party_private_imports(modules, libraries=("dask", "distributed")):
    """``(importer, private name)`` for every import of a private of `libraries`."""
    return sorted(
        (name, target)
        for name, (is_package, tree) in modules.items()
        for target, _ in _imports(name, is_package, tree)
        if target.split(".")[0] in libraries
        and any(
            part.startswith("_") and not part.startswith("__")
            for part in target.split(".")
        )
    )


def test_no_module_imports_a_private_of_dask_or_distributed():
    # the task tuple form ``{key: (func, *args)}`` is dask's public graph spec
    assert _third_party_private_imports(_project_modules()) == []
    flagged = {
        "m": (False, ast.parse("from dask._task_spec import Task\nimport dask.array\n"))
    }
    assert _third_party_private_imports(flagged) == [
        ("m", "dask._task_spec"),
        ("m", "dask._task_spec.Task"),
    ]


# A small tree: the checks must flag what the rules forbid, and only that.
SYNTHETIC = {
    "pkg": (True, "from pkg._core import f\nfrom pkg.sub import h\n"),
    "pkg._core": (False, "from pkg._util import g\nfrom pkg.sub import h\n"),
    "pkg._util": (False, "from pkg.api import uses\n"),
    "pkg.api": (False, "import pkg.sub._impl\n\ndef uses():\n    import pkg._util\n"),
    "pkg.sub": (True, "from ._impl import h\n"),
    "pkg.sub._impl": (
        False,
        "from .. import _util\nfrom ..api import _hidden\nfrom pkg._core import f\n"
        "import numpy._core\n",
    ),
}


def _synthetic():
    return {
        name: (is_package, ast.parse(source))
        for name, (is_package, source) in SYNTHETIC.items()
    }


def test_private_import_check_flags_cross_package_imports():
    assert _private_imports(_synthetic()) == [
        ("pkg.api", 1, "pkg.sub._impl"),  # pkg.api, 4: pkg's own private
        ("pkg.sub._impl", 1, "pkg._util"),
        ("pkg.sub._impl", 2, "pkg.api._hidden"),
        ("pkg.sub._impl", 3, "pkg._core"),
    ]


def test_cycle_check_flags_cycles_but_not_package_reexports():
    graph = _dependencies(_import_graph(_synthetic()))
    assert _cycles(graph) == [["pkg._core", "pkg._util", "pkg.api", "pkg.sub._impl"]]
    assert _cycles(_dependencies({"pkg": {"pkg.a"}, "pkg.a": {"pkg"}})) == []
    assert _cycles(_dependencies(_package_graph(_synthetic()))) == []
    siblings = {  # no module cycle, but a.m needs b and b.n needs a
        "top": (True, ""),
        "top.a": (True, ""),
        "top.a.m": (False, "from top.b.n import x\n"),
        "top.b": (True, ""),
        "top.b.n": (False, "def x():\n    import top.a\n"),
    }
    modules = {name: (pkg, ast.parse(src)) for name, (pkg, src) in siblings.items()}
    assert _cycles(_dependencies(_import_graph(modules))) == []
    assert _cycles(_dependencies(_package_graph(modules))) == [["top.a", "top.b"]]
