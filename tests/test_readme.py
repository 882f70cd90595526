"""The commands of the README and the documentation's pages run as written on a fresh clone: the
files they name exist, and every `focused` command they show is a command of the `focused`
tool. (The pages' offline examples are also run: tests/test_docs.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from focused.cli.main import build_parser
from focused.cli.refpages import PAGES

ROOT = Path(__file__).resolve().parents[1]
# The pages written from the code (the commands' help) are left out: their usage lines
# (``focused redis [-h] COMMAND``) are not commands, and the code cannot name a missing one.
WRITTEN = {ROOT / "docs" / "reference" / name for name in PAGES}
TEXTS = [ROOT / "README.md", *sorted(set((ROOT / "docs").rglob("*.md")) - WRITTEN)]
TEXT = "\n".join(path.read_text(encoding="utf-8") for path in TEXTS if "_build" not in path.parts)
CODE = "\n".join(re.findall(r"^```[^\n]*\n(.*?)^```", TEXT, flags=re.S | re.M))
# Paths of this repository: at the start of a word, never after "/" (``/shared/topics/...`` is
# a node's path in an example, not ours); under focused/ and tests/ only files (stats names
# such as ``focused/pages/fetched`` look like paths).
REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:topics|scripts|benchmarks|docs)/[\w./-]*\w"
    r"|(?:focused|tests)/[\w/-]*\.(?:py|html|js|css)"
    r"|scrapyd\.conf|scrapy\.cfg|pyproject\.toml)"
)
GROUPS = {"web", "taxonomy", "redis"}
# What the pages' commands write into the reader's working folder, not the repository's files:
# `focused label`'s topics/NAME-labelled/.
MADE = re.compile(r"topics/[\w.-]+-labelled(/|$)")


def test_every_file_the_text_names_is_in_the_repository():
    named = {path for path in REPO_PATH.findall(TEXT) if not path.startswith("docs/_build")}
    assert "topics/birds.toml" in named
    missing = sorted(p for p in named if not (ROOT / p).exists() and not MADE.match(p))
    assert not missing, missing


def commands() -> list[list[str]]:
    found = set()
    for line in CODE.splitlines():
        words = line.partition("#")[0].split()
        for i, word in enumerate(words):
            if word.endswith("focused") and word.split("/")[-1] == "focused" and i + 1 < len(words):
                command = words[i + 1]
                if re.fullmatch(r"[a-z][a-z-]*", command):
                    sub = words[i + 2] if command in GROUPS and i + 2 < len(words) else None
                    found.add((command, sub) if sub else (command,))
                break
    return sorted(list(c) for c in found)


@pytest.mark.parametrize("command", commands(), ids=" ".join)
def test_every_focused_command_in_the_text_exists(command, capsys):
    argv = [*command, "--help"]
    with pytest.raises(SystemExit) as exit_:
        build_parser(argv).parse_args(argv)
    assert exit_.value.code == 0, capsys.readouterr().err
