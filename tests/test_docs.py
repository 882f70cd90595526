"""The documentation builds without a warning, its links lead somewhere, its references cannot
drift from the code, and the shell examples of its tutorial and how-to guides run as shown.

Examples: in ``docs/intro/`` and ``docs/howto/``, a fenced block of language ``console`` is run.
Its lines starting with ``$ `` are commands (a line ending in ``\\`` goes on on the next one,
and a heredoc, ``cat > topic.toml <<'EOF'``, up to its ``EOF``);
the lines after a command, up to the next command, are its expected output, where ``...``
stands for any text (lines included); a command shown with no output must only succeed. A
page's blocks run in order in one bash, in a fresh folder with a fresh ``FOCUSED_HOME`` and
the project's ``focused`` and ``scrapy`` first on the ``PATH``; a command ending in ``&`` runs
in the background until the page ends, and the next command waits for the port it names
(``--port N``) to answer. The example ports (:data:`PORTS`) are replaced by free ones. Blocks
that cannot run offline are of language ``shell``, and are not run.
"""

from __future__ import annotations

import argparse
import html.parser
import os
import re
import shlex
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import unquote, urlsplit

import psutil
import pytest

from focused.cli.main import build_parser
from focused.settings.check import known_settings
from focused.settings.docs import setting_sections, undescribed
from tests.conftest import end_redis_under, kill_all

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
USER_TEXT = [ROOT / "README.md", ROOT / "focused" / "settings" / "defaults.py", *PAGES]
EXAMPLE_PAGES = [p for p in PAGES if p.parent.name in ("intro", "howto")]
PORTS = ("6379", "6800", "8080", "8081", "8090", "8091", "9410")
"""Ports the examples use; each run gets free ones instead."""

HISTORY = r"\bissues? #?\d+|\bseeds? 00\d|\bcommit [0-9a-f]{7,}\b"
"""Issue numbers, the papers' numbers in the project's notes, commit hashes."""
SETTING_NAME = re.compile(r"\bFOCUSED_[A-Z0-9_]*[A-Z0-9]\b")
ENVIRONMENT = {
    "FOCUSED_REDIS_URL",
    "FOCUSED_HOME",
    "FOCUSED_WORDNET",
    "FOCUSED_CACHE",
    "FOCUSED_TEST_WORKERS",  # scripts/test.sh's
}
"""Environment variables of the same spelling, named in the text as such."""


def test_every_setting_is_in_a_section_and_described():
    documented = [s.name for sec in setting_sections() for g in sec.groups for s in g.settings]
    assert sorted(documented) == sorted(known_settings())
    assert undescribed() == []


@pytest.mark.parametrize("path", USER_TEXT, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_text_names_only_settings_that_exist(path):
    named = set(SETTING_NAME.findall(path.read_text(encoding="utf-8")))
    assert not named - set(known_settings()) - ENVIRONMENT


@pytest.mark.parametrize("path", USER_TEXT, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_text_has_no_history(path):
    """Issue numbers, commit hashes and the papers' numbers in the project's notes belong in
    CHANGELOG.md or nowhere: a reader knows none of them."""
    text = path.read_text(encoding="utf-8")
    history = re.findall(HISTORY, text, re.I)
    assert not history


def test_the_commands_help_has_no_history():
    """The help of every command is a reference page too."""
    parsers, helps = [build_parser([])], []
    while parsers:
        parser = parsers.pop()
        helps.append(parser.format_help())
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += action.choices.values()
    assert len(helps) > 20
    assert not re.findall(HISTORY, "\n".join(helps), re.I)


TOPIC_ARGUMENT = re.compile(r"-a topic=(\S+)")
MADE_FILE = re.compile(r"\bcat > (\S+) <<|\bfocused web generate (\S+)")
"""A file a page's command writes: a heredoc's, or a generated web's folder (its topic.toml)."""


@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.parent.name == "intro"], ids=lambda p: p.name
)
def test_the_tutorials_topics_are_files_it_makes(page: Path):
    """The tutorial runs in the reader's own empty folder: each topic file its commands name,
    in blocks that run and in those that do not, is one an earlier command of it makes there."""
    made, missing = set(), []
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)
    for line in "\n".join(blocks).splitlines():
        for heredoc, web in MADE_FILE.findall(line):
            made.add(heredoc or f"{web}/topic.toml")
        missing += [topic for topic in TOPIC_ARGUMENT.findall(line) if topic not in made]
    assert not missing


RESULTS = sorted(p for p in (DOCS / "results").glob("*.md") if p.name != "index.md")
MEASURED = re.compile(r"\d{4}-\d\d-\d\d(/\d\d)?")


def current_figures(page: Path) -> tuple[str, list[dict[str, str]]]:
    """The text of a results page's first section, and the rows of its table by column."""
    first = page.read_text(encoding="utf-8").split("\n## ")[1]
    lines = [line.strip().strip("|") for line in first.splitlines() if line.startswith("|")]
    columns = [cell.strip() for cell in lines[0].split("|")]
    rows = [
        dict(zip(columns, (c.strip() for c in line.split("|")), strict=True)) for line in lines[2:]
    ]
    return first, rows


@pytest.mark.parametrize("page", RESULTS, ids=lambda p: p.name)
def test_each_results_page_opens_with_its_current_figures(page: Path):
    """A short table first, each figure with its date and command, on a machine named above it;
    the history of the measurements comes after it."""
    section, rows = current_figures(page)
    assert section.startswith("Current figures\n")
    assert "2-core Debian VM (24 GiB)" in " ".join(section.split())
    assert 3 <= len(rows) <= 10
    for row in rows:
        assert MEASURED.fullmatch(row["measured"]), row
        assert row["command"].startswith(("`", "the same")), row


def test_the_readmes_headline_harvest_is_the_evaluations_current_figure():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    harvest = readme.split("- **Harvest.**")[1].split("\n- ")[0]
    headline = re.findall(r"\*\*(\.\d+ / \.\d+)\*\*", harvest)
    _, rows = current_figures(DOCS / "results" / "evaluation.md")
    default = next(row for row in rows if row["crawler"].startswith("the default"))
    assert headline == [default["development"], default["validation"]]


def test_the_install_page_lists_every_extra_and_when_a_browser_is_needed():
    page = (DOCS / "intro" / "install.md").read_text(encoding="utf-8")
    table = page[page.index("| extra |") :].split("\n\n", 1)[0]
    listed = re.findall(r"^\| `([\w-]+)` \|", table, flags=re.M)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert sorted(listed) == sorted(pyproject["project"]["optional-dependencies"])
    chromium = page[page.index("## Chromium") :].split("\n## ", 1)[0]
    assert "FOCUSED_RENDER" in chromium and "never needs" not in chromium


def test_the_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 220


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with warnings as errors; what the build printed is in ``../build.log``."""
    out = tmp_path_factory.mktemp("docs") / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html"]
    result = subprocess.run([*command, str(DOCS), str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    (out.parent / "build.log").write_text(result.stdout + result.stderr, encoding="utf-8")
    return out


@pytest.mark.crawl
def test_the_build_says_what_it_does_and_no_more(built: Path):
    """Sphinx's progress, not an extension's dump of its whole configuration."""
    printed = (built.parent / "build.log").read_text(encoding="utf-8")
    assert "build succeeded" in printed
    assert "MdParserConfig" not in printed and "myst v" not in printed


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"])
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"])


@pytest.mark.crawl
def test_the_site_builds_and_every_internal_link_lands(built: Path):
    pages = {}
    for page in built.rglob("*.html"):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page.resolve()] = parser
    assert (built / "reference" / "settings.html").exists()
    history = [
        f"{page.relative_to(built)}: {found}"
        for page in pages
        for found in re.findall(HISTORY, page.read_text(encoding="utf-8"), re.I)
    ]
    assert not history, history  # what autodoc and the generated pages bring in too
    broken = []
    for page, parser in pages.items():
        for href in parser.hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith("mailto:"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(built)}: {href}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(built)}: {href} (no such anchor)")
    assert not broken, "\n".join(broken)


LEFTOVER_MARKUP = re.compile(r"^\s*\.\. [\w-]+::|```\{", re.M)
"""A reST directive or a MyST fence shown as text: markup that the page's parser did not read."""
DASHED_OPTION = re.compile(r"(?<![\w\u2013\u2014-])[\u2013\u2014][a-z][\w-]*")
"""An option whose ``--`` the typesetting made an en or em dash: copied, it fails."""


class _Text(html.parser.HTMLParser):
    """The text of a page, as a reader sees it (and copies it)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


@pytest.mark.crawl
def test_every_built_page_shows_its_markup_rendered_and_its_options_as_typed(built: Path):
    faults = []
    for page in sorted(built.rglob("*.html")):
        parser = _Text()
        parser.feed(page.read_text(encoding="utf-8"))
        text = "".join(parser.parts)
        where = page.relative_to(built)
        faults += [f"{where}: markup shown: {m.strip()!r}" for m in LEFTOVER_MARKUP.findall(text)]
        faults += [f"{where}: option shown as {m!r}" for m in set(DASHED_OPTION.findall(text))]
    assert not faults, "\n".join(faults)


# The examples.


def console_examples(page: Path) -> list[tuple[str, str, int]]:
    """``(command, expected output, line)`` of each command of the page's console blocks."""
    examples: list[tuple[str, str, int]] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    block = False
    for number, line in enumerate(lines, 1):
        if not block:
            block = line.strip() == "```console"
            continue
        if line.strip() == "```":
            block = False
        elif line.startswith("$ "):
            examples.append((line[2:], "", number))
        elif examples and not examples[-1][1] and _goes_on(examples[-1][0]):
            command, _, start = examples[-1]
            examples[-1] = (f"{command}\n{line}", "", start)
        elif examples:
            command, expected, start = examples[-1]
            examples[-1] = (command, f"{expected}{line}\n", start)
    return examples


def _goes_on(command: str) -> bool:
    """Whether the next line belongs to ``command``: after a ``\\`` or inside a heredoc."""
    lines = command.splitlines()
    heredoc = re.search(r"<<-?\s*'?(\w+)'?", command)
    return lines[-1].endswith("\\") or bool(heredoc and lines[-1].strip() != heredoc[1])


def matches(expected: str, output: str) -> bool:
    """Whether ``output`` is ``expected``, each ``...`` standing for any text."""
    clean = [line.rstrip() for line in output.strip().splitlines()]
    pattern = ".*?".join(re.escape(part) for part in expected.strip().split("..."))
    return re.fullmatch(pattern, "\n".join(clean), re.DOTALL) is not None


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def with_children(pid: int) -> list[psutil.Process]:
    """The process ``pid`` and its descendants, as far as they still run."""
    try:
        process = psutil.Process(pid)
        return [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def wait_for(port: str) -> str:
    """Bash that waits (at most a minute) until something listens on 127.0.0.1:``port``."""
    probe = f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null"
    return f"for _ in $(seq 300); do {probe} && break; sleep 0.2; done"


@pytest.mark.crawl
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "page",
    [p for p in EXAMPLE_PAGES if console_examples(p)],
    ids=lambda p: str(p.relative_to(DOCS)),
)
def test_the_pages_examples_run_as_shown(page: Path, tmp_path: Path):
    examples = console_examples(page)
    ports = {port: free_port() for port in PORTS}
    work = tmp_path / "work"
    work.mkdir()
    script = [f"cd {shlex.quote(str(work))}"]
    for i, (command, _, _) in enumerate(examples):
        for port, free in ports.items():
            command = command.replace(port, free)
        out = shlex.quote(str(tmp_path / f"out{i}"))
        if command.rstrip().endswith("&"):
            script.append(f"{{ {command.rstrip()[:-1]} ; }} >{out} 2>&1 &")
            script.append(f"echo $! >>{tmp_path / 'background'}")
            if port := re.search(r"--port (\d+)", command):
                script.append(wait_for(port[1]))
        else:
            script.append(f"{{ {command}\n}} >{out} 2>&1; echo $? >{out}.rc")
    bin_ = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}"}
    env["FOCUSED_HOME"] = str(tmp_path / "home")
    env.pop("FOCUSED_REDIS_URL", None)
    try:
        subprocess.run(["bash", "-c", "\n".join(script)], env=env, timeout=840, check=False)
    finally:
        background = tmp_path / "background"
        pids = background.read_text().split() if background.exists() else []
        processes = [p for pid in pids for p in with_children(int(pid))]
        for pid in pids:
            subprocess.run(["pkill", "-TERM", "-P", pid], check=False)
            subprocess.run(["kill", "-TERM", pid], check=False, capture_output=True)
        kill_all(psutil.wait_procs(processes, timeout=30)[1])
        # Servers stopped at once (a dashboard and an exporter) each see the other connected
        # to the embedded Redis as they exit, and leave it up: stop it as its last user.
        end_redis_under(tmp_path)
    for i, (command, expected, line) in enumerate(examples):
        if command.rstrip().endswith("&"):
            continue
        output = (tmp_path / f"out{i}").read_text(encoding="utf-8", errors="replace")
        for port, free in ports.items():
            output = output.replace(free, port)
        code = (tmp_path / f"out{i}.rc").read_text().strip()
        where = f"{page.relative_to(ROOT)}:{line}: $ {command}"
        assert code == "0", f"{where}\nexited {code}:\n{output}"
        assert not expected or matches(expected, output), f"{where}\nprinted:\n{output}"
