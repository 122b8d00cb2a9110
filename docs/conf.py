"""Sphinx configuration of the coded documentation (``sphinx-build -W docs OUT``)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

project = "coded"
author = "the coded developers"
copyright = "the coded developers"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

# .rst first: autosummary writes its stub pages with the first suffix.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "jupyter_execute"]
nitpicky = True

# MyST: heading anchors (links to a section of a page), $math$ and fenced directives.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "colon_fence"]

# Notebooks execute once per build and are cached by jupyter-cache; an error fails
# the build. ``CODED_DOCS_CACHE`` points the cache at a directory of its own.
nb_execution_mode = os.environ.get("CODED_DOCS_EXECUTE", "cache")
nb_execution_cache_path = os.environ.get("CODED_DOCS_CACHE", "")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_in_temp = True
nb_merge_streams = True
# Figures: the kernels draw with matplotlib's inline backend (Agg rendering, no
# display needed), whatever MPLBACKEND the build itself runs with.
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"

# API reference: one page per public object, numpydoc docstrings.
autosummary_generate = True
templates_path = ["_templates"]
autosummary_imported_members = True
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping: dict[str, tuple[str, None]] = {}

html_theme = "pydata_sphinx_theme"
html_title = "coded"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "navbar_align": "left",
}
html_static_path: list[str] = []

# The API pages list every name of each public module's ``__all__`` (the four
# packages and their public submodules, found by walking them), so a new public name
# or module is documented as soon as it is exported. An object re-exported by an
# earlier module (``coded.MDSCode`` from ``coded.codes``) is documented there only.
PACKAGES = ("coded", "theory", "allocation", "mapreduce")


def _public_modules() -> list[str]:
    import importlib
    import pkgutil

    names = []
    for package in PACKAGES:
        names.append(package)
        path = importlib.import_module(package).__path__
        names += sorted(
            f"{package}.{info.name}"
            for info in pkgutil.iter_modules(path)
            if not info.name.startswith("_")
        )
    return names


def _write_api_pages(source: Path) -> None:
    import importlib

    seen: set[int] = set()
    for name in _public_modules():
        module = importlib.import_module(name)
        names = [
            n
            for n in getattr(module, "__all__", ())
            if id(getattr(module, n)) not in seen
        ]
        seen.update(id(getattr(module, n)) for n in names)
        if not names:
            continue
        title = f"``{name}``"
        lines = [
            title,
            "=" * len(title),
            "",
            f".. automodule:: {name}",
            "   :no-members:",
            "",
            f".. currentmodule:: {name}",
            "",
            ".. autosummary::",
            "   :toctree: generated",
            "   :nosignatures:",
            "",
            *(f"   {n}" for n in names),
            "",
        ]
        page = source / "api" / f"{name}.rst"
        text = "\n".join(lines)
        if not page.is_file() or page.read_text() != text:
            page.write_text(text)


_write_api_pages(Path(__file__).resolve().parent)


# Cross-references. Docstrings name objects where they are defined
# (``coded.codes.Code``, ``coded.codes._modular.matmul_mod``) or relative to their class
# (``MDSCode.decode``); the pages document each object once, under its public name.
# A reference that names a real object is sent to that object's page, or left as
# plain text when the object is internal; one that names nothing stays a warning
# (``nitpicky``), so a typo or a renamed function fails the build.
def _lookup(path: str) -> object | None:
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            return None
        return value
    return None


_MISSING = object()


def _documented(env) -> dict[int, str]:
    cache = getattr(env, "_coded_documented", None)
    if cache is None:
        cache = {}
        for name in sorted(env.domaindata["py"]["objects"], key=len, reverse=True):
            value = _lookup(name)
            if value is not None and not isinstance(value, int | float | str):
                cache[id(value)] = name
        env._coded_documented = cache
    return cache


def _resolve_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    scopes = [node.get("py:module"), node.get("py:class")]
    candidates = [target]
    source = (node.source or "").partition(":docstring of ")[0]
    for module in list(sys.modules.values()):  # the module the docstring is in
        if source and getattr(module, "__file__", None) == source:
            candidates.append(f"{module.__name__}.{target}")
    if scopes[0]:
        candidates.append(f"{scopes[0]}.{target}")
        if scopes[1]:
            candidates.append(f"{scopes[0]}.{scopes[1]}.{target}")
    for candidate in candidates:
        value = _lookup(candidate)
        if value is None:
            continue
        name = _documented(env).get(id(value))
        if name is None:
            return contnode  # a real but internal object: plain text
        domain = env.get_domain("py")
        return domain.resolve_xref(
            env, node["refdoc"], app.builder, "obj", name, node, contnode
        )
    return None


def setup(app):
    """Register the alias resolver of cross-references."""
    app.connect("missing-reference", _resolve_alias)
