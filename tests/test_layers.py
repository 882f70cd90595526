"""The package's layering, read from the source: no import cycle, and the seams hold.

The import graph is built with :mod:`ast` from every module under ``focused/``. Module-level
imports and imports inside functions count alike (a lazy import is still a dependency, only a
later one). Imports under ``if TYPE_CHECKING:`` are left out of the cycle checks: they never
run (every module has ``from __future__ import annotations``), so they cannot make an
import-time cycle, and naming a type across a layer is what they are for. The seam checks do
count them: a module that imports ``redis`` only for its annotations still knows of Redis, which
is why those modules are listed by name.

Importing ``focused.a.b`` runs ``focused/a/__init__.py`` first, so it is an import of both.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "focused"

# Only the crawl store talks to Redis: no module outside focused/store/ imports redis-py at run
# time. These import it only under TYPE_CHECKING, to annotate the client they are handed.
REDIS_FOR_TYPES = frozenset({"focused.distill.job"})


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (or package), absolute
    typing: bool  # under ``if TYPE_CHECKING:``


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(
    nodes: Iterable[ast.AST], typing: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement among ``nodes``, at any depth, and whether it is type-only."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, typing
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _import_nodes(node.body, True)
            yield from _import_nodes(node.orelse, typing)
        else:
            yield from _import_nodes(ast.iter_child_nodes(node), typing)


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names: ``from a import b`` names ``a.b`` when that is
    a module of the package, else ``a`` (b is then a name defined in it)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]
        base = importlib.util.resolve_name("." * node.level + base, package)
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base
        for alias in node.names
    ]


@functools.cache
def imports() -> tuple[Import, ...]:
    found = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, typing in _import_nodes(tree.body):
            found += [Import(module, target, typing) for target in _targets(module, node)]
    return tuple(found)


def _runtime_dependencies(imp: Import) -> list[str]:
    """The package's modules an import runs: the module named and the packages above it (not
    the importer's own packages, which are already running)."""
    if imp.typing or imp.target.split(".")[0] != "focused":
        return []
    target = imp.target
    while target not in modules():  # ``import focused.x.name``: not a module, its package
        target = target.rpartition(".")[0]
    found = []
    while target != "focused":
        if target != imp.source and not imp.source.startswith(target + "."):
            found.append(target)
        target = target.rpartition(".")[0]
    return found


def module_graph() -> nx.DiGraph:
    """Modules, and an arrow from each to every module it imports at run time."""
    graph = nx.DiGraph()
    graph.add_nodes_from(modules())
    for imp in imports():
        for target in _runtime_dependencies(imp):
            graph.add_edge(imp.source, target)
    return graph


def room(module: str) -> str:
    """The package a module lives in (``focused.store``), or the module itself at the top."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else module


def room_graph() -> nx.DiGraph:
    """The packages of ``focused/`` (and its top-level modules), with the imports between them."""
    graph = nx.DiGraph()
    graph.add_nodes_from({room(m) for m in modules() if m != "focused"})
    for source, target in module_graph().edges:
        if room(source) != room(target):
            graph.add_edge(room(source), room(target))
    return graph


def _cycles(graph: nx.DiGraph) -> set[str]:
    """Every cycle, spelled from its first node in alphabetical order."""
    found = set()
    for cycle in nx.simple_cycles(graph):
        start = cycle.index(min(cycle))
        cycle = cycle[start:] + cycle[:start]
        found.add(" -> ".join([*cycle, cycle[0]]))
    return found


def _lines(found: Iterable[str]) -> str:
    """Every finding, one a line, for the failure message (pytest's diff would cut it)."""
    return "\n".join(["", *sorted(found)])


def test_no_import_cycle_between_modules():
    cycles = _cycles(module_graph())
    assert not cycles, _lines(cycles)


def test_no_import_cycle_between_packages():
    cycles = _cycles(room_graph())
    assert not cycles, _lines(cycles)


def test_the_graph_is_read_from_the_source():
    """The parsing the other tests rely on: a lazy import counts, a type-only one is marked,
    and ``from package import module`` names the module."""
    found = set(imports())
    assert Import("focused.cli.main", "focused.monitor.snapshot", False) in found  # in a function
    assert Import("focused.store.frontier.core", "redis", True) in found
    assert Import("focused.schedulers", "focused.schedulers.scheduler", False) in found
    assert Import("focused.strategies.hmm", "focused.store.strategy", False) in found
    graph = module_graph()
    assert graph.has_edge("focused.cli.main", "focused.monitor")  # the package runs first
    assert not graph.has_edge("focused.strategies.hmm", "focused.strategies")  # its own


def _importers(roots: set[str], *, typing: bool | None = None) -> set[str]:
    """The modules that import any of ``roots`` (top-level names), type-only or not (None:
    either)."""
    return {
        imp.source
        for imp in imports()
        if imp.target.split(".")[0] in roots and typing in (None, imp.typing)
    }


def _under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


# The packages that must not reach the crawler: what they may not import (anywhere, type-only
# included), and which of the package's own modules they may import.
SEAMS = {
    "focused.relevance": (
        {"scrapy", "twisted", "redis", "scrapy_redis"},
        ("focused.relevance", "focused.errors", "focused.printable"),
    ),
    "focused.lab.webs": ({"scrapy", "twisted", "redis", "scrapy_redis"}, None),
}


@pytest.mark.parametrize("package", SEAMS)
def test_seams_in_the_source(package):
    forbidden, allowed = SEAMS[package]
    inside = [imp for imp in imports() if _under(imp.source, package)]
    assert inside
    reaching = {f"{i.source}: {i.target}" for i in inside if i.target.split(".")[0] in forbidden}
    if allowed is not None:
        reaching |= {
            f"{i.source}: {i.target}"
            for i in inside
            if i.target.split(".")[0] == "focused" and not _under(i.target, *allowed)
        }
    assert not reaching, _lines(reaching)


@pytest.mark.crawl  # imports the package in a fresh interpreter
@pytest.mark.parametrize("package", SEAMS)
def test_seams_when_imported(package):
    """Importing every module of the package loads none of the forbidden libraries (nor
    through a third-party library), and no module of ours beyond the allowed ones."""
    forbidden, allowed = SEAMS[package]
    names = sorted(m for m in modules() if _under(m, package))
    code = (
        f"import sys, {', '.join(names)}\n"
        f"forbidden, allowed = {sorted(forbidden)!r}, {allowed!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in forbidden or allowed"
        " and m.startswith('focused.') and not m.startswith(allowed)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "[]"


def test_only_the_store_imports_redis():
    at_run_time = {m for m in _importers({"redis"}, typing=False) if not _under(m, "focused.store")}
    for_types = {m for m in _importers({"redis"}, typing=True) if not _under(m, "focused.store")}
    for_types -= at_run_time
    assert not at_run_time, _lines(at_run_time)
    assert for_types <= REDIS_FOR_TYPES, _lines(for_types - REDIS_FOR_TYPES)


def test_only_the_command_layer_imports_argparse():
    commands = ("focused.cli", "focused.commands")
    outside = {m for m in _importers({"argparse"}) if not _under(m, *commands)}
    assert not outside, _lines(outside)


# What only the store may do: call Redis (a client's, a pipeline's or a binary client's
# methods), reach a store's raw clients, or name the crawl's keys (of focused.store.keys, all but
# the rule for a crawl's name, which topic files and the labelling page check too).
REDIS_CALL = re.compile(r"\b(client|pipe|binary)\.[a-z_]+\(")
RAW_CLIENTS = frozenset({"client", "binary", "_client", "_binary"})
NOT_KEYS = frozenset({"NAME_RE"})
KEYS = "focused.store.keys"


def store_leaks(module: str, source: str) -> list[str]:
    """Where a module outside ``focused/store/`` does what only the store may: a Redis call
    (``client.x(``, ``pipe.x(``, ``binary.x(``: the lines ``grep -E`` finds with
    :data:`REDIS_CALL`), an attribute ``.client`` or ``.binary`` (a store's raw Redis), or an
    import of the key names (``focused.store.keys``)."""
    found = [
        f"{module}:{n}: {line.strip()}"
        for n, line in enumerate(source.splitlines(), 1)
        if REDIS_CALL.search(line)
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in RAW_CLIENTS:
            found.append(f"{module}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("focused.store", KEYS):
            names = {alias.name for alias in node.names}
            if (node.module == KEYS and names - NOT_KEYS) or (
                node.module != KEYS and "keys" in names
            ):
                found.append(f"{module}:{node.lineno}: imports the key names")
        elif isinstance(node, ast.Import) and any(a.name == KEYS for a in node.names):
            found.append(f"{module}:{node.lineno}: imports the key names")
    return sorted(found)


def test_only_the_store_talks_to_redis():
    leaks = [
        leak
        for module, path in modules().items()
        if not _under(module, "focused.store")
        for leak in store_leaks(module, path.read_text(encoding="utf-8"))
    ]
    assert not leaks, _lines(leaks)


def test_a_leak_is_found():
    """The check above finds each kind of leak (so its silence means something)."""
    source = (
        "from focused.store import keys\n"
        "def f(store):\n"
        "    store.client.hget(store.key(keys.META), 'x')\n"
        "    pipe = store.binary\n"
        "    pipe.execute()\n"
    )
    assert store_leaks("m", source) == [
        "m:1: imports the key names",
        "m:3: .client",
        "m:3: store.client.hget(store.key(keys.META), 'x')",
        "m:4: .binary",
        "m:5: pipe.execute()",
    ]
    assert store_leaks("m", "from focused.store.keys import NAME_RE, META\n") == [
        "m:1: imports the key names"
    ]
    assert (
        store_leaks("m", "from focused.store.keys import NAME_RE\nx = reader.crawl_names()\n") == []
    )
