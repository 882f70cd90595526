"""The reference pages written from the code: ``docs/reference/commands.md`` (the help of every
command, as it prints) and ``docs/reference/settings.md`` (every setting, from the comments of
:mod:`focused.settings.defaults`).

They are plain Markdown files committed in the repository, so that they read on their own (on a
forge, in an editor) as well as in the built site; ``python -m focused.cli.refpages`` rewrites them
after a change, and a test fails while a committed page differs from what the code gives.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from focused.cli.main import build_parser
from focused.settings.check import SCRAPY_TYPES, accepted
from focused.settings.docs import setting_sections

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
"""Where the pages are, in a checkout of the repository."""

HELP_COLUMNS = "80"
"""The width of the terminal the help is shown as printed in, whatever the terminal here."""

GENERATED = "<!-- Written from the code by `python -m focused.cli.refpages`: edit the code. -->"

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")
_NAME = re.compile(r"\bFOCUSED_[A-Z0-9_]*[A-Z0-9]\b")

_SETTINGS_INTRO = """\
# Settings

Every `FOCUSED_*` setting, with its default and what it accepts. Set them as any Scrapy
setting: `-s NAME=VALUE` on the command line, in your project's `settings.py`, or in a
spider's `custom_settings`. A value of the wrong type, a number out of the setting's range (a
negative delay, a batch of 0, a share above 1) or a word that is not one of a setting's choices
stops the crawl at start with one line naming the setting and what it accepts (exit code 2); so
does such a value of one of the Scrapy settings the crawl relies on, listed at the end of this
page. A `FOCUSED_*` name that is not a setting is a warning that names the closest one.

This page is written from the comments beside the defaults in `focused/settings/defaults.py`.
"""

_COMMANDS_INTRO = """\
# The `focused` command

`focused` is the toolbox around `scrapy crawl focused`: it trains models, reads a crawl's
state from Redis, serves the dashboard and the Prometheus exporter, runs Redis servers, serves
offline webs, turns a crawl's pages you mark into a topic and evaluates crawlers. Each
command's help, as `focused COMMAND --help` prints it:
"""


def _code(text: str) -> str:
    """``text`` as Markdown inline code, fenced by more backticks than it holds."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"{fence}{text}{fence}"


def _prose(text: str, known: set[str]) -> str:
    """A comment of defaults.py as Markdown: plain text, with each setting it names linked to
    its heading (whose anchor is its name in lower case, in the site as on a forge)."""
    parts = _NAME.split(text)
    out = [_MARKDOWN_SPECIAL.sub(r"\\\1", parts[0])]
    for name, part in zip(_NAME.findall(text), parts[1:], strict=True):
        out.append(f"[{_code(name)}](#{name.lower()})" if name in known else _code(name))
        out.append(_MARKDOWN_SPECIAL.sub(r"\\\1", part))
    return "".join(out)


def settings_page() -> str:
    """Every setting, section by section, with its default, what it accepts and its text; then
    what the Scrapy settings that the crawl checks accept."""
    sections = setting_sections()
    known = {s.name for section in sections for g in section.groups for s in g.settings}
    lines = [GENERATED, "", _SETTINGS_INTRO]
    for section in sections:
        lines += [f"## {section.title}", ""]
        for group in section.groups:
            if group.text:
                lines += [_prose(group.text, known), ""]
            for setting in group.settings:
                lines += [f"### {_code(setting.name)}", ""]
                lines += [f"Default: {_code(repr(setting.default))}; {accepted(setting.name)}."]
                if setting.own:
                    lines += ["", _prose(setting.own, known)]
                lines += [""]
    lines += ["## Scrapy's settings the crawl relies on", ""]
    lines += ["Checked at start as the `FOCUSED_*` settings are; their defaults are Scrapy's.", ""]
    lines += [f"- {_code(name)}: {accepted(name)}." for name in sorted(SCRAPY_TYPES)]
    return "\n".join(lines).rstrip() + "\n"


def commands_page() -> str:
    """``focused --help`` and the help of every command and subcommand, as printed."""
    lines = [GENERATED, "", _COMMANDS_INTRO]
    for prog, parser in _parsers(build_parser([]), "focused"):
        # each command adds some of its arguments only when it is the one named
        parser = dict(_parsers(build_parser(prog.split()[1:]), "focused"))[prog]
        lines += [f"## {_code(prog)}", "", "```text", _help(parser).rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


PAGES: dict[str, Callable[[], str]] = {"commands.md": commands_page, "settings.md": settings_page}
"""Each page's file name in ``docs/reference/``, and what writes it."""


def _help(parser: argparse.ArgumentParser) -> str:
    """``parser``'s help as a terminal :data:`HELP_COLUMNS` wide prints it."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS  # what argparse wraps to
    try:
        return parser.format_help()
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def _parsers(
    parser: argparse.ArgumentParser, prog: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(prog, parser)`` for ``parser`` and, depth first, each of its subcommands."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def main(argv: list[str] | None = None) -> int:
    """Rewrites the pages in the folder given (default: :data:`REFERENCE`)."""
    folder = Path(argv[0]) if argv else REFERENCE
    for name, page in PAGES.items():
        (folder / name).write_text(page(), encoding="utf-8")
        print(f"wrote {folder / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
