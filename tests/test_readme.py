"""The README's commands run as written on a fresh clone: the files they name exist, and every
`focused` command it shows is a command of the `focused` tool."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from focused.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODE = "\n".join(re.findall(r"^```[^\n]*\n(.*?)^```", README, flags=re.S | re.M))
# Paths of this repository: at the start of a word, never after "/" (``/shared/topics/...`` is
# a node's path in an example, not ours); under focused/ and tests/ only files (stats names
# such as ``focused/pages/fetched`` look like paths).
REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:topics|scripts|benchmarks|docs)/[\w./-]*\w"
    r"|(?:focused|tests)/[\w/-]*\.(?:py|html|js|css)"
    r"|scrapyd\.conf|scrapy\.cfg|pyproject\.toml)"
)
GROUPS = {"web", "taxonomy", "redis"}


def test_every_file_the_readme_names_is_in_the_repository():
    named = set(REPO_PATH.findall(README))
    assert "topics/birds.toml" in named
    missing = sorted(path for path in named if not (ROOT / path).exists())
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
def test_every_focused_command_in_the_readme_exists(command, capsys):
    argv = [*command, "--help"]
    with pytest.raises(SystemExit) as exit_:
        build_parser(argv).parse_args(argv)
    assert exit_.value.code == 0, capsys.readouterr().err
