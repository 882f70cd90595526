"""The reference pages list what the code has, no more and no less: the Scrapy stats focused
adds, the Prometheus metrics of ``focused exporter``, the Redis keys of a crawl and the fields
of the feed. Each is read from the source (its syntax tree, not by running it) and compared
with the table of its page, both ways, so a page cannot drift from the code.

A name built at run time is expanded where the source says what it can be (a loop over a
tuple of strings, a module constant, a helper called with string literals, ``a if c else
b``, ``{...}.get(x, default)``); otherwise its placeholder is written ``<name>``, after the
variable or attribute it comes from (``f"focused/bad_page/{reason}"`` is
``focused/bad_page/<reason>``).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from focused.cli.refpages import PAGES

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "focused"
REFERENCE = ROOT / "docs" / "reference"
STAT_METHODS = {"inc_value", "set_value", "max_value", "min_value"}
FAMILIES = {"CounterMetricFamily": "counter", "GaugeMetricFamily": "gauge"}

# What a name stands for while walking a module: a string, or a tuple of them (a list literal).
Value = str | tuple[str, ...]
Env = dict[str, Value]


# Reading the source.


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _literal(node: ast.AST) -> Any:
    """The value of a literal of strings, tuples and lists, else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return value if isinstance(value, str | tuple | list) else None


def _sources() -> dict[str, ast.Module]:
    return {
        _module_name(path): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(CODE.rglob("*.py"))
    }


def _constants(trees: dict[str, ast.Module]) -> dict[str, dict[str, Any]]:
    """Each module's names bound at its top level to a literal, its imports of them included."""
    own: dict[str, dict[str, Any]] = {}
    for module, tree in trees.items():
        own[module] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and (value := _literal(node.value)) is not None:
                    own[module][target.id] = value
    every = {module: dict(names) for module, names in own.items()}
    for module, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in own:
                for alias in node.names:
                    if alias.name in own[node.module]:
                        every[module][alias.asname or alias.name] = own[node.module][alias.name]
    return every


def _as_value(value: Any) -> Value | None:
    if isinstance(value, str):
        return value
    if isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


class Walker:
    """Walks one module, unrolling loops over literal tuples and helpers called with literal
    strings, and calls ``on_call(walker, call, env)`` for every call with the names bound at it."""

    def __init__(self, tree: ast.Module, constants: dict[str, Any], on_call: Callable):
        self.tree, self.constants, self.on_call = tree, constants, on_call
        self.calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]

    def run(self) -> None:
        self.block(self.tree.body, {})

    def block(self, body: list[ast.stmt], env: Env) -> None:
        env = dict(env)
        for statement in body:
            self.node(statement, env)

    def rows(self, iterable: ast.AST, env: Env) -> list[Any] | None:
        """The elements of a literal iterable (or of a constant naming one), else None."""
        if isinstance(iterable, ast.Name):
            value = env.get(iterable.id, self.constants.get(iterable.id))
            return list(value) if isinstance(value, tuple | list) else None
        value = _literal(iterable)
        return list(value) if isinstance(value, tuple | list) else None

    @staticmethod
    def bind(target: ast.AST, row: Any, env: Env) -> Env:
        env = dict(env)
        if isinstance(target, ast.Name):
            if (value := _as_value(row)) is not None:
                env[target.id] = value
            else:
                env.pop(target.id, None)
        elif isinstance(target, ast.Tuple) and isinstance(row, tuple | list):
            for part, item in zip(target.elts, row, strict=False):
                env = Walker.bind(part, item, env)
        return env

    @staticmethod
    def unbind(target: ast.AST, env: Env) -> Env:
        env = dict(env)
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                env.pop(name.id, None)
        return env

    def node(self, node: ast.AST, env: Env) -> None:
        if isinstance(node, ast.For):
            rows = self.rows(node.iter, env)
            self.node(node.iter, env)
            for row in rows if rows is not None else [None]:
                inner = self.bind(node.target, row, env) if rows else self.unbind(node.target, env)
                self.block(node.body, inner)
            self.block(node.orelse, env)
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            self.comprehension(node, node.generators, env)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in self.call_sites(node, env):
                self.block(node.body, inner)
        elif isinstance(node, ast.ClassDef):
            self.block(node.body, env)
        else:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    value = _as_value(_literal(node.value))
                    if value is not None:
                        env[target.id] = value
                    else:
                        env.pop(target.id, None)
            if isinstance(node, ast.Call):
                self.on_call(self, node, env)
            for child in ast.iter_child_nodes(node):
                self.node(child, env)

    def comprehension(self, node: ast.AST, generators: list[ast.comprehension], env: Env):
        if not generators:
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for part in parts:
                self.node(part, env)
            return
        first, rest = generators[0], generators[1:]
        self.node(first.iter, env)
        rows = self.rows(first.iter, env)
        for row in rows if rows is not None else [None]:
            inner = self.bind(first.target, row, env) if rows else self.unbind(first.target, env)
            for condition in first.ifs:
                self.node(condition, inner)
            self.comprehension(node, rest, inner)

    def call_sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, env: Env):
        """The bindings of a function's parameters: one per call of it in this module whose
        first argument is a string literal (its other string literals bound too, the rest of
        its parameters unbound: a count), or, without such calls, the parameters unbound."""
        params = [a.arg for a in function.args.posonlyargs + function.args.args]
        env = {k: v for k, v in env.items() if k not in params}
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        found = []
        for call in self.calls:
            name = getattr(call.func, "attr", getattr(call.func, "id", None))
            values = [_literal(arg) for arg in call.args]
            if name == function.name and call.args and isinstance(values[0], str):
                bound = {p: v for p, v in zip(params, values, strict=False) if isinstance(v, str)}
                found.append({**env, **bound})
        return found or [env]

    def strings(self, node: ast.AST, env: Env) -> list[str]:
        """What a string expression can be, with ``<name>`` for what cannot be known."""
        if isinstance(node, ast.Constant):
            return [str(node.value)]
        if isinstance(node, ast.Name):
            value = env.get(node.id, self.constants.get(node.id))
            return [value] if isinstance(value, str) else [f"<{node.id}>"]
        if isinstance(node, ast.Attribute):
            return [f"<{node.attr}>"]
        if isinstance(node, ast.FormattedValue):
            return self.strings(node.value, env)
        if isinstance(node, ast.JoinedStr):
            parts = [self.strings(value, env) for value in node.values]
            return ["".join(p) for p in itertools.product(*parts)]
        if isinstance(node, ast.IfExp):
            return self.strings(node.body, env) + self.strings(node.orelse, env)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pairs = itertools.product(self.strings(node.left, env), self.strings(node.right, env))
            return [a + b for a, b in pairs]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Dict)
        ):
            values = [s for v in node.func.value.values for s in self.strings(v, env)]
            defaults = [s for arg in node.args[1:] for s in self.strings(arg, env)]
            return values + defaults
        return [f"<{ast.unparse(node)}>"]

    def truth(self, node: ast.AST, env: Env) -> bool | None:
        """The value of ``name == "literal"`` with the names bound, else None."""
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq | ast.NotEq)
        ):
            left = self.strings(node.left, env)
            right = self.strings(node.comparators[0], env)
            if len(left) == len(right) == 1 and "<" not in left[0] + right[0]:
                return (left[0] == right[0]) == isinstance(node.ops[0], ast.Eq)
        return None


def code_stats() -> set[str]:
    """Every ``focused/...`` Scrapy stat the code counts or sets."""
    trees = _sources()
    constants = _constants(trees)
    found: set[str] = set()
    for module, tree in trees.items():

        def on_call(walker: Walker, call: ast.Call, env: Env) -> None:
            method = getattr(call.func, "attr", None)
            names: list[str] = []
            if method in STAT_METHODS and call.args:
                names += walker.strings(call.args[0], env)
            for keyword in call.keywords:
                if keyword.arg == "failures":  # focused.store.periodic's failure counter
                    names += walker.strings(keyword.value, env)
            found.update(name for name in names if name.startswith("focused/"))

        Walker(tree, constants[module], on_call).run()
    return found


def code_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every metric of focused.monitor.metrics: name (counters with ``_total``) -> (type,
    labels)."""
    trees = _sources()
    module = "focused.monitor.metrics"
    found: dict[str, tuple[str, tuple[str, ...]]] = {}

    def kind_of(walker: Walker, func: ast.AST, env: Env) -> str | None:
        if isinstance(func, ast.Name):
            return FAMILIES.get(func.id)
        if isinstance(func, ast.IfExp):
            truth = walker.truth(func.test, env)
            if truth is not None:
                return kind_of(walker, func.body if truth else func.orelse, env)
        return None

    def on_call(walker: Walker, call: ast.Call, env: Env) -> None:
        kind = kind_of(walker, call.func, env)
        if kind is None or not call.args:
            return
        labels: Value = ()
        for keyword in call.keywords:
            if keyword.arg == "labels":
                if isinstance(keyword.value, ast.Name):
                    labels = env.get(keyword.value.id, (f"<{keyword.value.id}>",))
                else:
                    labels = _as_value(_literal(keyword.value)) or ("<labels>",)
        for name in walker.strings(call.args[0], env):
            suffix = "_total" if kind == "counter" else ""
            found[name + suffix] = (kind, tuple(labels))

    Walker(trees[module], _constants(trees)[module], on_call).run()
    return found


def metric_literals() -> set[str]:
    """The string literals of focused.monitor.metrics that are metric names (``focused_...``),
    f-strings' literal parts left out."""
    tree = ast.parse((CODE / "monitor" / "metrics.py").read_text(encoding="utf-8"))
    parts = {id(p) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for p in n.values}
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and re.fullmatch(r"focused_\w+", n.value)
        and id(n) not in parts
    }


# Reading the pages.


def table_rows(page: str) -> Iterator[list[str]]:
    """The cells of every row of the page's Markdown tables (header and rule lines left out)."""
    lines = (REFERENCE / page).read_text(encoding="utf-8").splitlines()
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        if not line.startswith("|") or re.fullmatch(r"[|\s:-]+", line):
            continue
        if re.fullmatch(r"[|\s:-]+", following):  # a header
            continue
        yield [cell.strip() for cell in line.strip().strip("|").split("|")]


def first_names(page: str, pattern: str) -> list[str]:
    """The name in backquotes that opens the first cell of each table row, if it matches."""
    names = []
    for cells in table_rows(page):
        if match := re.fullmatch(rf"`({pattern})`", cells[0]):
            names.append(match[1])
    return names


# The tests.


def test_the_code_reading_finds_the_stats_names_built_at_run_time():
    stats = code_stats()
    assert {"focused/pages/fetched", "focused/addresses/refused"} <= stats  # literal, constant
    assert "focused/bad_page/<reason>" in stats  # an f-string of a variable
    assert {"focused/genetic/crossover", "focused/genetic/raised"} <= stats  # a loop
    assert {"focused/hmm/fits", "focused/hmm/soft"} <= stats  # a helper's call sites
    assert {"focused/infospiders/births", "focused/infospiders/reseeds"} <= stats  # dict.get
    assert {"focused/redirects/queued", "focused/redirects/seen"} <= stats  # a if c else b
    assert "focused/distiller/failed" in stats  # a periodic job's failure counter
    assert not [s for s in stats if "<" in s and not re.search(r"<[a-z_]+>$", s)]


def test_the_stats_page_lists_every_stat_the_code_keeps_and_no_other():
    documented = first_names("stats.md", r"focused/[^`]+")
    assert len(documented) == len(set(documented)), "a stat is listed twice"
    code = code_stats()
    assert sorted(code - set(documented)) == [], "stats the code keeps and the page lacks"
    assert sorted(set(documented) - code) == [], "stats the page lists and the code lacks"


def test_the_metrics_page_lists_every_metric_with_its_type_and_labels():
    rows = [c for c in table_rows("metrics.md") if re.fullmatch(r"`focused_\w+`", c[0])]
    documented = {
        cells[0].strip("`"): (cells[1], tuple(x.strip() for x in cells[2].split(",") if x.strip()))
        for cells in rows
    }
    assert len(documented) == len(rows), "a metric is listed twice"
    code = code_metrics()
    assert "focused_process_pages_total" in code  # expanded from the tuple it iterates
    assert code["focused_urls_seen_total"] == ("counter", ("crawl",))  # from CRAWL_METRICS
    literals = metric_literals()
    assert literals and literals <= {name.removesuffix("_total") for name in code}
    assert sorted(set(code) - set(documented)) == [], "metrics the page lacks"
    assert sorted(set(documented) - set(code)) == [], "metrics the code lacks"
    wrong = {
        name: (documented[name], code[name]) for name in code if documented[name] != code[name]
    }
    assert wrong == {}, "type or labels differ: (page, code)"


def test_the_redis_keys_page_lists_every_key_of_keys_py_and_no_other():
    tree = ast.parse((CODE / "store" / "keys.py").read_text(encoding="utf-8"))
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    prefix = constants.pop("PREFIX")
    assert prefix.format(crawl="NAME") == "focused:{NAME}:"
    text = (REFERENCE / "redis-keys.md").read_text(encoding="utf-8")
    assert "`focused:{NAME}:`" in text and "`focused:{NAME/j}:`" in text
    documented = first_names("redis-keys.md", r"[a-z][a-z:_]*(?:<[^>`]+>)?")
    assert len(documented) == len(set(documented)), "a key is listed twice"
    # A key of many (one per host, process, bucket) is its constant and then <what>.
    stripped = [re.sub(r"<[^>]+>$", "", key) for key in documented]
    assert sorted(set(constants.values()) - set(stripped)) == [], "keys the page lacks"
    assert sorted(set(stripped) - set(constants.values())) == [], "keys keys.py lacks"
    for key, bare in zip(documented, stripped, strict=True):
        assert bare.endswith(":") == (key != bare), f"{key}: a key of many ends in ':<what>'"


def _page_fields(tree: ast.Module) -> list[str]:
    """The fields of the ``Page`` dataclass of focused/items.py, in order."""
    page = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Page")
    return [
        s.target.id
        for s in page.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    ]


def _feed_fields_set_by_code(fields: list[str]) -> set[str]:
    """The page fields the spider, the pipelines and the page itself (``Page.judged``) set:
    the arguments of ``Page(...)`` (positional ones by the dataclass's order, ``fields``) and
    attribute assignments ``page.... = ...`` (``item`` in the spider, ``self`` in items.py)."""
    found: set[str] = set()
    paths = [CODE / "spiders" / "focused.py", CODE / "items.py", *(CODE / "pipelines").glob("*.py")]
    for path in paths:
        names = ("self",) if path.name == "items.py" else ("page", "item")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Page":
                found.update(fields[: len(node.args)])
                found.update(k.arg for k in node.keywords if k.arg)
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                parts = target.elts if isinstance(target, ast.Tuple) else [target]
                for part in parts:
                    if isinstance(part, ast.Attribute) and getattr(part.value, "id", "") in names:
                        found.add(part.attr)
    return found


def test_the_feed_page_lists_every_exported_field_and_no_other():
    tree = ast.parse((CODE / "items.py").read_text(encoding="utf-8"))
    exported: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "FEED_FIELDS":
            exported = list(ast.literal_eval(node.value))
    fields = _page_fields(tree)
    item_fields = set(fields)
    assert exported and set(exported) <= item_fields
    documented = first_names("feed.md", r"[a-z_]+")
    assert documented == exported, "the page lists the feed's fields in the feed's order"
    # Every field the code sets is an item field; those the feed exports are documented.
    set_by_code = _feed_fields_set_by_code(fields)
    assert set_by_code <= item_fields
    assert set(exported) <= set_by_code
    # focused export writes the feed's names for what Redis keeps.
    export = ast.parse((CODE / "cli" / "export.py").read_text(encoding="utf-8"))
    written = {
        node.slice.value
        for node in ast.walk(export)
        if isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.slice, ast.Constant)
    }
    written |= {
        key.value
        for node in ast.walk(export)
        if isinstance(node, ast.Dict)
        for key in node.keys
        if isinstance(key, ast.Constant)
    }
    assert written and written <= set(documented)
    text = (REFERENCE / "feed.md").read_text(encoding="utf-8")
    for field in sorted(written):
        assert f"`{field}`" in text.split("focused export", 1)[1], field


def test_the_exit_codes_page_lists_the_codes_of_scrapy_crawl_and_of_focused():
    page = (REFERENCE / "exit-codes.md").read_text(encoding="utf-8")
    crawl_part, focused_part = page.split("\n## `focused`\n")
    codes = {
        part: {int(m) for m in re.findall(r"^\| (\d+) \|", text, re.M)}
        for part, text in (("crawl", crawl_part), ("focused", focused_part))
    }
    crawl = ast.parse((CODE / "commands" / "crawl.py").read_text(encoding="utf-8"))
    own = {
        v.value
        for n in ast.walk(crawl)
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "EXIT_CODES"
        for v in n.value.values
    }
    assert own and own | {0, 1, 2} == codes["crawl"]  # 1 is Scrapy's own, 2 SystemExit(2)
    main = ast.parse((CODE / "cli" / "main.py").read_text(encoding="utf-8"))
    function = next(n for n in main.body if getattr(n, "name", "") == "main")
    returned = {
        n.value.value
        for n in ast.walk(function)
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Constant)
    }
    assert returned and returned | {0} == codes["focused"]


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_written_pages_are_as_the_code_writes_them(name: str):
    """The commands and settings pages are committed, so that they read on their own too."""
    committed = (REFERENCE / name).read_text(encoding="utf-8")
    stale = f"docs/reference/{name} is stale: python -m focused.cli.refpages"
    assert committed == PAGES[name](), stale
