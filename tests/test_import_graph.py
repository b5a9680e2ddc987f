"""No import circle in ``bbcore`` or ``bbtui``: a reader follows any module downward.

Every module's imports are read with ``ast`` (nothing is imported), lazy ones
inside functions and ``TYPE_CHECKING`` blocks included: a function-level
import that climbs back up is still a circle, only deferred.  An edge goes to
the module named: ``from bbcore import compact`` and ``import bbcore.compact``
both point at ``bbcore.compact``; ``from bbcore.store import db`` at
``bbcore.store``.  The package ``__init__`` a submodule import also runs is
not an edge (``bbcore/__init__.py`` holds only the version, and
``bbcore.cli`` imports a command's module by its name, ``importlib``, when
the command runs).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bbcore", "bbtui")

EXPLORATION_LAYERS: tuple[tuple[str, ...], ...] = (
    ("bbcore.explore",),  # the entry: checks, locks, picks a pipeline
    ("bbcore.full", "bbcore.compact.run"),  # the two pipelines
    ("bbcore.compact.trace", "bbcore.compact.group", "bbcore.compact.write"),  # the compact stages
    ("bbcore.compact.shards", "bbcore.columns"),  # what the stages share
    ("bbcore.ranges", "bbcore.lock", "bbcore.feasibility", "bbcore.runner", "bbcore.cluster"),  # every run's
    ("bbcore.progress", "bbcore.lifeline"),  # how a run reports and ends; workers that end with it
)
"""The exploration from the top down: a module imports only modules of the layers
below its own, never its own layer's or a higher one's, so that a reader follows
``explore(config)`` downward without climbing back.  Modules outside the list
(the store, the engine, ...) are below all of it."""

KNOWN_CIRCLES: dict[frozenset[str], str] = {}
"""Circles left on purpose (say one that only the compact store's rewrite can
break), each with why, keyed by its modules; empty: the house has none since
the resume ranges left ``explore.py`` for ``ranges.py``.  The test fails on an
entry whose circle is gone, so that it is removed."""


def module_name(path: Path) -> str:
    """``bbcore/cli/browse.py`` -> ``bbcore.cli.browse``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def house_modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name."""
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imported_names(path: Path, name: str, is_package: bool) -> list[tuple[str, str | None]]:
    """(module, imported name or None) for every import statement of a file, wherever it stands."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package
                package = name.split(".") if is_package else name.split(".")[:-1]
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found += [(base, alias.name) for alias in node.names]
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the house's modules it imports."""
    modules = house_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for module, member in imported_names(path, name, path.name == "__init__.py"):
            submodule = f"{module}.{member}" if member else None
            if submodule in modules:
                targets.add(submodule)  # from bbcore import compact
            elif module in modules:
                targets.add(module)
        targets.discard(name)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan): the circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def describe(graph: dict[str, set[str]], circle: frozenset[str]) -> str:
    """A circle as its modules and every import that ties them (each one a way to break it)."""
    ties = [f"    {a} -> {b}" for a in sorted(circle) for b in sorted(graph[a] & circle)]
    return f"{len(circle)} modules: {', '.join(sorted(circle))}\n" + "\n".join(ties)


def test_the_graph_reads_every_import_form():
    """Plain, from-package, from-module and function-level imports all become edges."""
    graph = import_graph()
    assert "bbcore.config" in graph["bbcore.numbering"]  # from bbcore.config import Config
    assert "bbcore.store" in graph["bbcore.compact.trace"]  # from bbcore.store import ...
    assert "bbcore.engine" in graph["bbcore.compact.trace"]  # from bbcore import engine
    assert "bbcore.compact.trace" in graph["bbcore.compact.run"]  # from bbcore.compact.trace import ...
    assert "bbcore.lifeline" in graph["bbcore.runner"]  # inside _worker_init()
    assert "bbtui.host" in graph["bbtui.screens.molecule"]
    bbcore_targets = {t for name, targets in graph.items() if name.startswith("bbcore.") for t in targets}
    assert not any(t.startswith("bbtui") for t in bbcore_targets)


def test_lazy_relative_and_type_checking_imports_are_read(tmp_path):
    """Imports inside functions and ``if TYPE_CHECKING:``, and relative ones, are edges too."""
    source = tmp_path / "module.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from bbcore.store import db\n"
        "def later():\n    import bbcore.compact\n    from .common import emit\n    from .. import ranges\n"
    )
    found = imported_names(source, "bbcore.cli.browse", is_package=False)
    assert ("bbcore.store", "db") in found and ("bbcore.compact", None) in found
    assert ("bbcore.cli.common", "emit") in found and ("bbcore", "ranges") in found
    assert imported_names(source, "bbcore.cli", is_package=True)[-1] == ("bbcore", "ranges")


def test_circles_are_found():
    """The search finds a planted circle (and only it) with the imports that tie it."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"a"}}
    assert circles(graph) == [frozenset("abc")]
    assert describe(graph, frozenset("abc")).splitlines()[1:] == ["    a -> b", "    b -> c", "    c -> a"]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    """``bbcore`` and ``bbtui`` import downward only; a known circle that is gone leaves the list."""
    graph = import_graph()
    found = circles(graph)
    unknown = [circle for circle in found if circle not in KNOWN_CIRCLES]
    assert not unknown, "import circles:\n" + "\n".join(describe(graph, c) for c in unknown)
    stale = [sorted(circle) for circle in KNOWN_CIRCLES if circle not in found]
    assert not stale, f"no longer circles, remove them from KNOWN_CIRCLES: {stale}"


def test_the_exploration_imports_only_downward():
    """Every exploration module imports only from the layers below its own (``EXPLORATION_LAYERS``),
    and every module of the compact package has its layer."""
    graph = import_graph()
    layer = {module: depth for depth, modules in enumerate(EXPLORATION_LAYERS) for module in modules}
    unplaced = [m for m in graph if m.startswith("bbcore.compact.") and m not in layer]
    assert not unplaced, f"give these a layer in EXPLORATION_LAYERS: {unplaced}"
    climbs = [
        f"{module} (layer {layer[module]}) -> {target} (layer {layer[target]})"
        for module in sorted(layer)
        for target in sorted(graph[module])
        if target in layer and layer[target] <= layer[module]
    ]
    assert not climbs, "imports across or up the exploration's layers:\n" + "\n".join(climbs)
    faces = [f"{m} -> {t}" for m in sorted(layer) for t in graph[m] if t.startswith(("bbcore.cli", "bbtui"))]
    assert not faces, f"the exploration imports a face: {faces}"


def test_no_bench_script_hides_a_standard_library_module():
    """``python bench/X.py`` puts ``bench/`` first on the import path: a script named like a module of
    the standard library hides it from every import (``bench/copy.py`` broke peewee's ``import copy``
    in ``bench/strategy.py``)."""
    bench = ROOT / "bench"
    hiding = sorted(path.name for path in bench.glob("*.py") if path.stem in sys.stdlib_module_names)
    assert not hiding, f"bench scripts named as standard-library modules: {hiding}"
